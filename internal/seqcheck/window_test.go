package seqcheck

import "testing"

// A window counts the frames sent in it: gaps, the first gap, late frames and
// repeats, and neither frames from before it nor, once stopped, from after it.
func TestWindow(t *testing.T) {
	var w Window
	w.Begin(10)
	for _, c := range []uint64{8, 10, 11, 14, 12, 12, 15} {
		w.Take(c, 0, false, c+1)
	}
	w.Stop(16)
	w.Take(16, 0, true, 17) // after the window
	want := Window{Start: 10, End: 16, Next: 16, Received: 5, Gaps: 2, FirstGap: 12, Reordered: 1, Duplicates: 1}
	w.seen = [len(w.seen)]uint64{}
	if w != want {
		t.Errorf("window %+v, want %+v", w, want)
	}
	if w.Offered() != 6 {
		t.Errorf("offered %d, want 6", w.Offered())
	}
}

// A counter modulo mod is the largest whole counter below the sender's count that
// it is congruent to.
func TestWindowModulo(t *testing.T) {
	var w Window
	w.Begin(250)
	for _, n := range []uint64{250, 251, 255, 256, 257} {
		if !w.Take(n%256, 256, false, n+1) {
			t.Fatalf("frame %d (counter %d) not counted", n, n%256)
		}
	}
	if w.Next != 258 || w.Gaps != 3 || w.FirstGap != 252 {
		t.Errorf("next %d, gaps %d from %d; want 258, 3 from 252", w.Next, w.Gaps, w.FirstGap)
	}
	if w.Take(5, 256, false, 0) {
		t.Error("a frame counted before its sender sent any")
	}
}

// A frame without a counter counts while the window runs, and in the drain until
// the window's count is reached.
func TestWindowBare(t *testing.T) {
	var w Window
	w.Begin(0)
	w.TakeBare(false)
	w.Stop(2)
	if !w.TakeBare(true) || w.TakeBare(true) {
		t.Error("the drain counted other than the one frame the window still owed")
	}
	if w.Received != 2 {
		t.Errorf("received %d, want 2", w.Received)
	}
}
