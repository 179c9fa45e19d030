package bench

import (
	"reflect"
	"testing"
)

// A stream's missing frame is its first gap's counter; without a gap, the one
// expected next when the window's last frames never arrived; none when all
// arrived or the stream is filtered.
func TestWatchedMissingIsTheFirstMissingCounter(t *testing.T) {
	s := &stream{sends: func(id uint32, ext bool) bool { return true }}
	w := &Watched{streams: []*stream{s}}
	nths := func() []uint64 {
		var out []uint64
		for _, m := range w.Missing() {
			out = append(out, m.Nth)
		}
		return out
	}
	s.FirstGap, s.Gaps = 5, 1
	if got := nths(); !reflect.DeepEqual(got, []uint64{5}) {
		t.Errorf("gap at 5: missing %v, want [5]", got)
	}
	s.Gaps, s.Next, s.End = 0, 6, 7
	if got := nths(); !reflect.DeepEqual(got, []uint64{6}) {
		t.Errorf("next 6 of 7 sent: missing %v, want [6]", got)
	}
	s.Next = 7
	if got := nths(); got != nil {
		t.Errorf("all arrived: missing %v, want none", got)
	}
	s.Next, s.filtered = 6, true
	if got := nths(); got != nil {
		t.Errorf("filtered stream: missing %v, want none", got)
	}
}
