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

// The heartbeat's age is read in the board's time, from the board's time at
// the sample before the beat was seen (never younger than the board's age); the
// host's age is kept too. Before the first beat seen, the host's age stands in.
func TestHeartbeatAgeInTheBoardsTime(t *testing.T) {
	var now, beatAt, board int64
	h := &heartbeatWatch{age: func() int64 { return now - beatAt }, at: func() int64 { return beatAt }, board: func() int64 { return board }}
	var l beatLook
	look := func(wantAge, wantRaw int64) {
		t.Helper()
		if age, raw := h.sample(&l); age != wantAge || raw != wantRaw {
			t.Errorf("host %d, board %d (beat %d): age %d, raw %d; want %d, %d", now, board, beatAt, age, raw, wantAge, wantRaw)
		}
	}
	now, beatAt, board = 100, 90, 1000
	look(10, 10)           // the first beat: the host's age back from the board's now
	now, board = 160, 1020 // the host stalled the owner: the board saw 20 of 60
	look(30, 70)
	now, beatAt, board = 170, 165, 1030 // a beat since the last sample, at board 1020..1030
	look(10, 5)
	now, board = 200, 1100 // cand's running charged: the board ahead of the host
	look(80, 35)
	// Without the board's time the age is the host's.
	h.board = nil
	look(35, 35)
}
