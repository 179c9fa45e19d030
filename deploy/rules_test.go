package deploy_test

import (
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const (
	rulesFile     = "prometheus/cand-rules.yml"
	rulesTestFile = "prometheus/cand-rules.test.yml"
)

// ruleFile is the part of a Prometheus rule file the tests look at.
type ruleFile struct {
	Groups []struct {
		Name  string
		Rules []struct {
			Record, Alert, Expr, For string
			Labels, Annotations      map[string]string
		}
	}
}

func loadYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestRulesCheck(t *testing.T) {
	t.Log(promtool(t, "check", "rules", rulesFile))
}

// The unit tests in cand-rules.test.yml: every alert firing and not firing, and
// the recording rules' values.
func TestRulesUnitTests(t *testing.T) {
	t.Log(promtool(t, "test", "rules", rulesTestFile))
}

// Every alert must be testable and actionable: a for: duration, a severity, a
// summary and a description, and a firing case in the unit tests.
func TestRulesAlertsComplete(t *testing.T) {
	var rules ruleFile
	loadYAML(t, rulesFile, &rules)
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string
				ExpAlerts []any `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		}
	}
	loadYAML(t, rulesTestFile, &tests)
	firing, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				firing[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	alerts := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts++
			if r.For == "" {
				t.Errorf("alert %s: no for: duration", r.Alert)
			}
			if s := r.Labels["severity"]; s != "critical" && s != "warning" {
				t.Errorf("alert %s: severity %q, want critical or warning", r.Alert, s)
			}
			for _, a := range []string{"summary", "description"} {
				if strings.TrimSpace(r.Annotations[a]) == "" {
					t.Errorf("alert %s: no %s annotation", r.Alert, a)
				}
			}
			if !firing[r.Alert] || !quiet[r.Alert] {
				t.Errorf("alert %s: %s lacks a firing or a not-firing case (firing %v, not firing %v)",
					r.Alert, rulesTestFile, firing[r.Alert], quiet[r.Alert])
			}
		}
	}
	if alerts == 0 {
		t.Fatalf("%s: no alerts", rulesFile)
	}
}

// The rules and the unit tests' synthetic series use only names cand exports
// (or the rules record), so a renamed metric breaks this test rather than the
// alerts silently.
func TestRulesMetricNames(t *testing.T) {
	known := exportedNames(t)
	var rules ruleFile
	loadYAML(t, rulesFile, &rules)
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				known[r.Record] = true
			}
		}
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			checkNames(t, rulesFile+": "+r.Record+r.Alert, r.Expr, known)
		}
	}
	var tests struct {
		Tests []struct {
			Name        string
			InputSeries []struct{ Series string } `yaml:"input_series"`
		}
	}
	loadYAML(t, rulesTestFile, &tests)
	for _, tc := range tests.Tests {
		for _, s := range tc.InputSeries {
			name, _, _ := strings.Cut(s.Series, "{")
			if !known[name] {
				t.Errorf("%s: test %q feeds series %s, which cand does not export", rulesTestFile, tc.Name, s.Series)
			}
		}
	}
}
