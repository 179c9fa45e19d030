// Package deploy_test checks the monitoring files in deploy/: the Prometheus
// rules (promtool check and unit tests) and the Grafana dashboard (structure,
// PromQL syntax), and that both use only metric names cand exports.
package deploy_test

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"cand/metrics"
)

// pendingNames are exported only once a daemon configured them (not by a bare
// registry): the bit-timing info series.
var pendingNames = []string{
	"cand_bit_timing_info",
}

// prometheusNames are series Prometheus makes itself for every target.
var prometheusNames = []string{"up"}

// exposition returns the text exposition of a registry with one controller.
func exposition(t *testing.T) []string {
	t.Helper()
	r := metrics.New("test")
	r.AddController("can0", "can0")
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /metrics: %d\n%s", rec.Code, rec.Body)
	}
	return strings.Split(rec.Body.String(), "\n")
}

// exportedNames returns the names of the series in the exposition, as
// Prometheus stores them (histograms as their _bucket, _sum and _count series),
// plus the pending and Prometheus's own names.
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, line := range exposition(t) {
		if line == "" || line[0] == '#' {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
		}
	}
	if !names["cand_rx_frames_total"] || !names["process_start_time_seconds"] {
		t.Fatalf("exposition lacks cand_rx_frames_total or process_start_time_seconds: %v", names)
	}
	for _, n := range slices.Concat(pendingNames, prometheusNames) {
		names[n] = true
	}
	return names
}

// help returns the HELP text of the metric name in the exposition.
func help(t *testing.T, name string) string {
	t.Helper()
	prefix := "# HELP " + name + " "
	for _, line := range exposition(t) {
		if h, ok := strings.CutPrefix(line, prefix); ok {
			return h
		}
	}
	t.Fatalf("exposition has no HELP for %s", name)
	return ""
}

// checkNames reports every metric name in expr that is not in known.
func checkNames(t *testing.T, where, expr string, known map[string]bool) {
	t.Helper()
	for _, n := range metricNames(expr) {
		if !known[n] {
			t.Errorf("%s: metric %s is not exported by cand (expression %s)", where, n, expr)
		}
	}
}

// PromQL words that are no metric names: aggregations, binary and set
// operators, modifiers, and the number literals inf and nan.
var promqlWords = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
	"and": true, "or": true, "unless": true, "atan2": true, "bool": true, "offset": true,
	"inf": true, "nan": true,
}

// Words followed by a parenthesised list of label names.
var labelListWords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// metricNames returns the metric names a PromQL expression selects: the
// identifiers outside strings, label matchers, ranges and label lists that are
// neither a function call nor a PromQL word. It assumes expr parses (promtool
// checks that); a name given only as {__name__="…"} is not seen.
func metricNames(expr string) []string {
	var names []string
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			i = skipString(expr, i)
		case c == '{':
			i = skipTo(expr, i, '}')
		case c == '[':
			i = skipTo(expr, i, ']')
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case isDigit(c) || c == '.' && i+1 < len(expr) && isDigit(expr[i+1]):
			// A number or a duration, exponent sign included.
			for i++; i < len(expr) && (isIdent(expr[i]) || expr[i] == '.' ||
				(expr[i] == '+' || expr[i] == '-') && (expr[i-1] == 'e' || expr[i-1] == 'E')); i++ {
			}
		case isIdentStart(c):
			j := i
			for j < len(expr) && isIdent(expr[j]) {
				j++
			}
			word := expr[i:j]
			next := j
			for next < len(expr) && (expr[next] == ' ' || expr[next] == '\t' || expr[next] == '\n') {
				next++
			}
			call := next < len(expr) && expr[next] == '('
			lower := strings.ToLower(word)
			switch {
			case labelListWords[lower]:
				if call {
					j = skipTo(expr, next, ')')
				}
			case call || promqlWords[lower]:
			default:
				names = append(names, word)
			}
			i = j
		default:
			i++
		}
	}
	return names
}

// skipString returns the index after the string literal starting at i.
func skipString(s string, i int) int {
	q := s[i]
	for i++; i < len(s); i++ {
		if s[i] == '\\' && q != '`' {
			i++
		} else if s[i] == q {
			return i + 1
		}
	}
	return i
}

// skipTo returns the index after the first end outside string literals from i.
func skipTo(s string, i int, end byte) int {
	for i++; i < len(s); {
		switch s[i] {
		case '"', '\'', '`':
			i = skipString(s, i)
		case end:
			return i + 1
		default:
			i++
		}
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
func isIdent(c byte) bool { return isIdentStart(c) || isDigit(c) }

func TestMetricNames(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`up{job="cand"} == 0`, []string{"up"}},
		{`histogram_quantile(0.99, sum by (le, stage) (rate(a_bucket{x=~"a}b"}[5m])))`, []string{"a_bucket"}},
		{`sum(rate(a[1m:10s])) without (instance) / on (job) group_left (version) b offset 5m`, []string{"a", "b"}},
		{`changes(p[15m]) > 0 and on (job, instance) c`, []string{"p", "c"}},
		{`1e-3 * x + Inf - 0x1F + .5 / y`, []string{"x", "y"}},
		{"rec:name:rate1m > 2.5e+2 unless nan # a comment with words", []string{"rec:name:rate1m"}},
		{`time() - count_values("v", z)`, []string{"z"}},
	} {
		if got := metricNames(tc.expr); !slices.Equal(got, tc.want) {
			t.Errorf("metricNames(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}
