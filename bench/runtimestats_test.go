package bench

import (
	"runtime/metrics"
	"testing"

	cmetrics "cand/metrics"
)

// otherPauses is how many stop-the-world pauses other than the GC's the runtime
// has made (/sched/pauses/total/other:seconds).
func otherPauses(t *testing.T) uint64 {
	t.Helper()
	s := []metrics.Sample{{Name: "/sched/pauses/total/other:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		t.Skip("this runtime has no /sched/pauses/total/other:seconds")
	}
	var n uint64
	for _, c := range s[0].Value.Float64Histogram().Counts {
		n += c
	}
	return n
}

var sink []*[64]byte

// The measured window's start and end stop no world (a stop parks the owner
// thread, charged to cand at the board's park cost), and still count every heap
// allocation, tiny ones included, as runtime.MemStats.Mallocs does.
func TestWindowStopsNoWorld(t *testing.T) {
	w := window{m: cmetrics.New("test").AddController("can0", "can0")}
	before := otherPauses(t)
	w.begin()
	for range 100 {
		sink = append(sink, new([64]byte))
	}
	w.end()
	if got := otherPauses(t) - before; got != 0 {
		t.Errorf("the window's start and end stopped the world %d times", got)
	}
	if w.mallocs < 100 {
		t.Errorf("%d allocations counted, want at least the 100 made", w.mallocs)
	}
	sink = nil
}
