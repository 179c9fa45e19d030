package seqcheck

// Step is how a counter follows the previous one of its stream.
type Step int

const (
	First  Step = iota // the stream's first counter
	Next               // one more than the previous: in order
	Skip               // more than one more: frames missing between
	Repeat             // the same counter again
	Back               // lower: the frame arrived after a later one
)

// Follow says how counter c follows prev for counters of bits bits (2 to 64) that
// wrap around: below 64 bits, a counter up to half the range behind prev is Back
// and one further is Skip ahead; at 64 bits any counter below prev is Back.
func Follow(prev, c uint64, bits uint) Step {
	d := c - prev
	if bits < 64 {
		d &= 1<<bits - 1
	}
	switch {
	case d == 0:
		return Repeat
	case d == 1:
		return Next
	case bits < 64 && d >= 1<<(bits-1), bits >= 64 && c < prev:
		return Back
	}
	return Skip
}

// Last follows one stream by its last counter. The zero value has seen none.
type Last struct {
	seen bool
	last uint64
}

// Note says how c follows the last counter (First if none), which it returns as
// prev, and makes c the last, whatever the step.
func (l *Last) Note(c uint64, bits uint) (step Step, prev uint64) {
	step, prev = First, l.last
	if l.seen {
		step = Follow(prev, c, bits)
	}
	l.seen, l.last = true, c
	return step, prev
}
