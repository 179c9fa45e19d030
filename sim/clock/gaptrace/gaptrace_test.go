package gaptrace

import (
	"strings"
	"testing"

	"cand/sim/clock"
)

// The ring keeps the last n gaps, oldest first, and dumps one a line.
func TestRingKeepsTheLastGaps(t *testing.T) {
	r := New(2)
	if got := r.Records(); len(got) != 0 {
		t.Fatalf("empty ring: %v", got)
	}
	for i := range 3 {
		r.Gap(clock.GapRecord{At: int64(i + 1), Kind: 's'})
	}
	got := r.Records()
	if len(got) != 2 || got[0].At != 2 || got[1].At != 3 {
		t.Fatalf("records %+v, want at 2 and 3", got)
	}
	if d := r.Dump(); strings.Count(d, "\n") != 2 || !strings.HasPrefix(d, "at 2 ") || !strings.Contains(d, " s board ") {
		t.Errorf("dump %q", d)
	}
}
