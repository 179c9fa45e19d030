package gpio

// SeqTracker detects edge events the kernel dropped. When a request's event queue
// overflows, the kernel discards the oldest event, so the request-wide seqno of the
// events read afterwards jumps. The kernel numbers a request's events from 1.
//
// For a one-line request (cand's INT line) seqno and line_seqno are the same count;
// SeqTracker follows seqno. The zero value is ready and expects seqno 1 first.
type SeqTracker struct {
	last uint32 // seqno of the last event observed; 0 before the first
	lost uint64 // total events lost
}

// Observe accounts for e and returns how many events were lost just before it
// (0 when e follows the previous event directly). A seqno that goes backwards (or
// repeats) is not counted as a loss; the tracker resynchronises on it.
func (t *SeqTracker) Observe(e *Event) (lost uint32) {
	d := e.Seqno - t.last // wraps like the kernel's u32 counter
	t.last = e.Seqno
	if d == 0 || d > 1<<31 {
		return 0 // repeated or older: a reset, not a loss
	}
	lost = d - 1
	t.lost += uint64(lost)
	return lost
}

// Lost is the total number of events lost so far.
func (t *SeqTracker) Lost() uint64 { return t.lost }

// Last is the seqno of the last event observed (0 before the first).
func (t *SeqTracker) Last() uint32 { return t.last }
