package seqcheck

import "testing"

// Each step by its counters, at the widths the callers use: a byte (wrapping), 32
// bits, and the whole 64.
func TestFollow(t *testing.T) {
	for _, tc := range []struct {
		prev, c uint64
		bits    uint
		want    Step
	}{
		{5, 6, 64, Next},
		{5, 9, 64, Skip},
		{5, 5, 64, Repeat},
		{5, 4, 64, Back},
		{1 << 63, 0, 64, Back},
		{^uint64(0), 0, 64, Next},
		{255, 0, 8, Next},
		{250, 3, 8, Skip},
		{3, 250, 8, Back},
		{3, 3 + 127, 8, Skip},
		{3, 3 + 128, 8, Back},
		{7, 7, 8, Repeat},
		{0xFFFFFFFF, 0, 32, Next},
		{10, 9, 32, Back},
	} {
		if got := Follow(tc.prev, tc.c, tc.bits); got != tc.want {
			t.Errorf("Follow(%d, %d, %d) = %v, want %v", tc.prev, tc.c, tc.bits, got, tc.want)
		}
	}
}

// Last compares with the last counter noted, whatever its step, and says First
// for the first.
func TestLast(t *testing.T) {
	var l Last
	type note struct {
		c    uint64
		step Step
		prev uint64
	}
	for i, n := range []note{{4, First, 0}, {5, Next, 4}, {5, Repeat, 5}, {3, Back, 5}, {4, Next, 3}, {9, Skip, 4}} {
		step, prev := l.Note(n.c, 64)
		if step != n.step || (step != First && prev != n.prev) {
			t.Errorf("note %d (counter %d): %v after %d, want %v after %d", i, n.c, step, prev, n.step, n.prev)
		}
	}
}
