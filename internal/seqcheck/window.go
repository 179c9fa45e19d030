package seqcheck

// Window counts one sender's frames over a measured window: those whose counter
// the sender reached between Begin and Stop are offered, and each that arrives is
// received, or found missing (a gap), late (after a later one) or repeated. Frames
// from before the window, and from after it once stopped, are not counted. It
// allocates nothing.
type Window struct {
	Start, End uint64 // the sender's count at Begin and Stop
	Next       uint64 // the counter expected next
	Received   uint64 // frames of the window that arrived (not counting repeats)
	Gaps       uint64 // frames missing between two that arrived
	FirstGap   uint64 // the counter of the first frame found missing (once Gaps > 0)
	Reordered  uint64 // frames that arrived after a later one
	Duplicates uint64 // frames that arrived again
	// seen[c%len] is c+1 for the counters c that arrived, over the last len.
	seen [4096]uint64
}

// Begin starts the window at the sender's count sent.
func (w *Window) Begin(sent uint64) { w.Start, w.Next = sent, sent }

// Stop ends the window at the sender's count sent; frames of the window may still
// arrive (the drain).
func (w *Window) Stop(sent uint64) { w.End = sent }

// Offered is the frames of the window: those the sender completed (or wrote) in it.
func (w *Window) Offered() uint64 { return w.End - w.Start }

// Take counts a frame that carries counter c modulo mod (0: the whole counter);
// sentNow is the sender's count read after the frame arrived, so its whole
// counter is below it: the largest such counter congruent to c (right as long as
// a frame arrives within mod frames of the sender's). stopped says the window has
// ended. It reports whether the frame was received in the window.
func (w *Window) Take(c, mod uint64, stopped bool, sentNow uint64) bool {
	full := c
	if mod != 0 {
		if sentNow == 0 {
			return false // nothing sent yet: not the sender's frame
		}
		top := sentNow - 1
		back := (top%mod + mod - c) % mod
		if back > top {
			return false
		}
		full = top - back
	}
	if full < w.Start || (stopped && full >= w.End) {
		return false
	}
	if slot := &w.seen[full%uint64(len(w.seen))]; *slot == full+1 {
		w.Duplicates++
		return false
	} else {
		*slot = full + 1
	}
	if full < w.Next {
		w.Reordered++
	} else {
		if full > w.Next && w.Gaps == 0 {
			w.FirstGap = w.Next
		}
		w.Gaps += full - w.Next
		w.Next = full + 1
	}
	w.Received++
	return true
}

// TakeBare counts a frame that carries no counter: it is received while the
// window runs, and in the drain until the window's count is reached. It reports
// whether the frame was counted.
func (w *Window) TakeBare(stopped bool) bool {
	if stopped && w.Received >= w.Offered() {
		return false
	}
	w.Received++
	return true
}
