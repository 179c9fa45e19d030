package canbus

import "go.einride.tech/can"

// StuffedData returns data bytes for a data frame with f's ID, IDE and Length that
// put the fewest (most false) or the most (most true) stuff bits into the frame.
//
// Bit stuffing (ISO 11898-1: a complement bit after five equal bits, the stuff bit
// starting the next run) depends on the run in progress when the data field
// starts, so the data is built bit by bit from that state: for the most stuffing
// each data bit repeats the run's value, which forces a stuff bit after the
// run's first four bits and then after every four data bits (the densest
// stuffing there is); for the least each data bit is the complement of the one
// before, so the data field itself carries no stuff bit. The CRC that follows
// depends on the data: the last byte is then chosen, among all 256, for the
// extreme stuffed length of the whole frame.
func StuffedData(f can.Frame, most bool) can.Data {
	n := int(min(f.Length, 8))
	if n == 0 {
		return can.Data{}
	}
	g := can.Frame{ID: f.ID, IsExtended: f.IsExtended, Length: uint8(n)}
	var r rawBits
	r.build(g)
	header := r.n - 15 - 8*n // SOF..DLC
	run := newStuffRun()
	for _, b := range r.b[:header] {
		run.push(b)
	}
	var d can.Data
	for i := 0; i < 8*n; i++ {
		bit := run.last
		if !most {
			bit = 1 - run.last
		}
		d[i/8] |= bit << (7 - uint(i%8))
		run.push(bit)
	}
	best, bestLen := d, -1
	for v := 0; v < 256; v++ {
		g.Data = d
		g.Data[n-1] = byte(v)
		l := stuffedLen(g)
		if bestLen < 0 || (most && l > bestLen) || (!most && l < bestLen) {
			best, bestLen = g.Data, l
		}
	}
	return best
}

// stuffRun follows bit stuffing over unstuffed bits (one bit per byte): the
// value of the run in progress and its length, a stuff bit counting as the first
// bit of the next run.
type stuffRun struct {
	last byte // 2 before the first bit
	n    int
}

func newStuffRun() stuffRun { return stuffRun{last: 2} }

// push adds bit b and reports whether a stuff bit follows it.
func (r *stuffRun) push(b byte) bool {
	if b == r.last {
		r.n++
	} else {
		r.last, r.n = b, 1
	}
	if r.n == 5 {
		r.last, r.n = 1-r.last, 1
		return true
	}
	return false
}
