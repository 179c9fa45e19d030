package gpio

import "testing"

func TestSeqTracker(t *testing.T) {
	for _, c := range []struct {
		name  string
		start uint32 // seqno of an event observed before the test's
		seqs  []uint32
		lost  []uint32
		total uint64
	}{
		{"in order from 1", 0, []uint32{1, 2, 3}, []uint32{0, 0, 0}, 0},
		{"oldest dropped before the first read", 0, []uint32{4, 5}, []uint32{3, 0}, 3},
		{"gaps", 0, []uint32{1, 3, 4, 8}, []uint32{0, 1, 0, 3}, 4},
		{"u32 wrap without loss", 1<<32 - 3, []uint32{1<<32 - 2, 1<<32 - 1, 0, 1}, []uint32{0, 0, 0, 0}, 0},
		{"u32 wrap with loss", 1<<32 - 3, []uint32{1<<32 - 1, 2}, []uint32{1, 2}, 3},
		{"far jump back is a resync, not a loss", 0, []uint32{1<<32 - 2, 5}, []uint32{0, 6}, 6},
		{"repeat and backwards resync, no loss", 0, []uint32{1, 2, 2, 1, 2}, []uint32{0, 0, 0, 0, 0}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := SeqTracker{last: c.start}
			for i, s := range c.seqs {
				e := Event{Seqno: s}
				if got := st.Observe(&e); got != c.lost[i] {
					t.Errorf("Observe(seqno %d) = %d lost, want %d", s, got, c.lost[i])
				}
			}
			if st.Lost() != c.total {
				t.Errorf("Lost() = %d, want %d", st.Lost(), c.total)
			}
		})
	}
}
