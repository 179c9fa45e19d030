package metrics

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"cand/canstate"
)

// recordKnown fills the rx_end_to_end stage with values whose buckets are known:
// 0 ns → zero bucket; 1000, 1000, 1000, 1001 ns → bucket -159 (0.954, 1.040] µs;
// 10 µs ×2 → bucket -132 (9.89, 10.79] µs; 20 ms → bucket -45 (18.58, 20.26] ms.
func recordKnown(c *Controller) {
	for _, ns := range []int64{0, 1000, 1000, 1000, 1001, 10_000, 10_000, 20_000_000} {
		c.RXEndToEnd.Observe(ns)
	}
}

func findHistogram(t *testing.T, r *Registry, name string, labels map[string]string) *dto.Histogram {
	t.Helper()
	mfs, err := r.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		if mf.GetType() != dto.MetricType_HISTOGRAM {
			t.Fatalf("%s has type %v, want HISTOGRAM", name, mf.GetType())
		}
	next:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			return m.GetHistogram()
		}
	}
	t.Fatalf("no %s%v in the registry", name, labels)
	return nil
}

func TestExportNativeAndClassic(t *testing.T) {
	r := New("1.2.3")
	c := r.AddController("can0", "vcan0")
	recordKnown(c)
	h := findHistogram(t, r, "cand_stage_latency_seconds",
		map[string]string{"controller": "can0", "interface": "vcan0", "stage": "rx_end_to_end"})

	if h.GetSampleCount() != 8 {
		t.Errorf("count = %d, want 8", h.GetSampleCount())
	}
	if want := 20_024_001e-9; h.GetSampleSum() != want {
		t.Errorf("sum = %v, want %v", h.GetSampleSum(), want)
	}

	// Native part.
	if h.GetSchema() != 3 || h.GetZeroThreshold() != math.Exp2(-30) || h.GetZeroCount() != 1 {
		t.Errorf("schema %d, zero threshold %v, zero count %d; want 3, 2^-30, 1",
			h.GetSchema(), h.GetZeroThreshold(), h.GetZeroCount())
	}
	type span struct {
		off int32
		n   uint32
	}
	var spans []span
	for _, s := range h.GetPositiveSpan() {
		spans = append(spans, span{s.GetOffset(), s.GetLength()})
	}
	// Keys -159, -132 (26 empty buckets between) and -45 (86 empty between).
	wantSpans := []span{{-159, 1}, {26, 1}, {86, 1}}
	if !equal(spans, wantSpans) {
		t.Errorf("positive spans = %v, want %v", spans, wantSpans)
	}
	if d, want := h.GetPositiveDelta(), []int64{4, -2, -1}; !equal(d, want) {
		t.Errorf("positive deltas = %v, want %v", d, want)
	}

	// Classic part: 28 cumulative buckets at 2^-20 s, 2^-19.5 s, …, 2^-6.5 s.
	b := h.GetBucket()
	if len(b) != 28 {
		t.Fatalf("%d classic buckets, want 28", len(b))
	}
	for i, bk := range b {
		le := math.Exp2(-20 + float64(i)/2)
		var want uint64
		switch {
		case le < 1000e-9:
			want = 1 // only the zero
		case le < 10_000e-9:
			want = 5
		default:
			want = 7 // 20 ms is above the last classic bound: only in +Inf
		}
		if math.Abs(bk.GetUpperBound()-le) > 1e-15*le || bk.GetCumulativeCount() != want {
			t.Errorf("classic bucket %d: le=%v count=%d, want le=%v count=%d",
				i, bk.GetUpperBound(), bk.GetCumulativeCount(), le, want)
		}
	}

	// An untouched histogram is still marked native (empty span) and has zero counts.
	e := findHistogram(t, r, "cand_spi_transfer_seconds", map[string]string{"kind": "rts", "completion": "sleep"})
	if e.GetSampleCount() != 0 || len(e.GetPositiveSpan()) != 1 || e.GetPositiveSpan()[0].GetLength() != 0 {
		t.Errorf("empty transfer histogram = %v", e)
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// secondScrapeHas scrapes r twice (a collector's read function counts its
// calls, so the second scrape shows 2) and checks that the second exposition
// holds each of the lines want.
func secondScrapeHas(t *testing.T, r *Registry, want ...string) {
	t.Helper()
	scrapeText(t, r.Handler())
	text := scrapeText(t, r.Handler())
	for _, w := range want {
		if !strings.Contains(text, w+"\n") {
			t.Errorf("exposition lacks %q:\n%s", w, text)
		}
	}
}

func scrapeText(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, err := http.NewRequest("GET", srv.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("GET /metrics: %s, Content-Type %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	return string(body)
}

func TestTextExposition(t *testing.T) {
	r := New("1.2.3")
	c := r.AddController("can0", "vcan0")
	recordKnown(c)
	c.RXFrames.Add(3)
	c.Polls.Add(5)
	c.Sleeps.Inc()
	c.BusState.Set(int64(canstate.ErrorPassive))
	c.SCLKHz.Set(10_000_000)
	c.ObserveTransfer(4, CompletionPoll, 7200, 2) // read_status
	text := scrapeText(t, r.Handler())

	const l = `controller="can0",interface="vcan0"`
	for _, line := range []string{
		`# TYPE cand_stage_latency_seconds histogram`,
		`cand_stage_latency_seconds_bucket{` + l + `,stage="rx_end_to_end",le="9.5367431640625e-07"} 1`,
		`cand_stage_latency_seconds_bucket{` + l + `,stage="rx_end_to_end",le="1.0789593218788873e-05"} 7`,
		`cand_stage_latency_seconds_bucket{` + l + `,stage="rx_end_to_end",le="+Inf"} 8`,
		`cand_stage_latency_seconds_sum{` + l + `,stage="rx_end_to_end"} 0.020024001`,
		`cand_stage_latency_seconds_count{` + l + `,stage="rx_end_to_end"} 8`,
		`cand_stage_latency_seconds_count{` + l + `,stage="both_rx_full"} 0`,
		`cand_spi_transfer_seconds_count{completion="poll",` + l + `,kind="read_status"} 1`,
		`cand_spi_transfer_seconds_sum{completion="poll",` + l + `,kind="read_status"} 7.2e-06`,
		`cand_rx_frames_total{` + l + `} 3`,
		`cand_waits_total{completion="poll",` + l + `} 5`,
		`cand_waits_total{completion="sleep",` + l + `} 1`,
		`cand_spi_bytes_total{` + l + `} 2`,
		`cand_bus_state{` + l + `} 2`,
		`cand_spi_clock_hertz{` + l + `} 1e+07`,
		`# TYPE cand_build_info gauge`,
	} {
		if !strings.Contains(text, "\n"+line+"\n") {
			t.Errorf("exposition lacks the line\n\t%s", line)
		}
	}
	if !strings.Contains(text, `cand_build_info{goversion="go`) || !strings.Contains(text, `version="1.2.3"} 1`) {
		t.Errorf("exposition lacks cand_build_info{goversion=…,version=\"1.2.3\"} 1")
	}
	if n := strings.Count(text, "cand_spi_transfer_seconds_count{"); n != 18 {
		t.Errorf("%d SPI transfer series, want 18 (9 kinds × poll/sleep)", n)
	}
	if t.Failed() {
		t.Logf("exposition:\n%s", text)
	}
}
