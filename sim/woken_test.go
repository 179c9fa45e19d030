package sim

import "testing"

// The woken side's CPU time of a wake-up against the host's hand-off:
//
//	go test -run - -bench WokenShare -benchtime 5x ./sim/
func BenchmarkWokenShare(b *testing.B) {
	for b.Loop() {
		h, w := measureHandOff(), measureWoken()
		b.ReportMetric(h, "handoff-ns")
		b.ReportMetric(w, "woken-cpu-ns")
		b.ReportMetric(w/h*100, "woken-%-of-handoff")
	}
}
