package metrics

import (
	"strings"
	"testing"
)

// Each real-time setting has a series from the start, 1 once refused.
func TestRealtimeRefused(t *testing.T) {
	r := New("test")
	rt := r.AddRealtime()
	want := func(sched, affinity, mlockall string) {
		t.Helper()
		text := scrapeText(t, r.Handler())
		for _, line := range []string{
			"# TYPE cand_realtime_refused gauge",
			`cand_realtime_refused{setting="sched_fifo"} ` + sched,
			`cand_realtime_refused{setting="affinity"} ` + affinity,
			`cand_realtime_refused{setting="mlockall"} ` + mlockall,
		} {
			if !strings.Contains(text, line+"\n") {
				t.Errorf("exposition lacks %q:\n%s", line, text)
			}
		}
	}
	want("0", "0", "0")
	rt.SetRefused(SchedFIFO, true)
	rt.SetRefused(MemoryLock, true)
	want("1", "0", "1")
	rt.SetRefused(MemoryLock, false)
	want("1", "0", "0")
}
