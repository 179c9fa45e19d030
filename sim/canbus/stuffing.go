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
	last, run := stuffState(r.b[:header])
	var d can.Data
	for i := 0; i < 8*n; i++ {
		bit := last
		if !most {
			bit = 1 - last
		}
		d[i/8] |= bit << (7 - uint(i%8))
		if bit == last {
			run++
		} else {
			last, run = bit, 1
		}
		if run == 5 {
			last, run = 1-last, 1
		}
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

// stuffState is the stuffing run at the end of bits (unstuffed, one bit per byte):
// the run's value and length, a stuff bit counting as the first bit of a run.
func stuffState(bits []byte) (last byte, run int) {
	last = 2
	for _, b := range bits {
		if b == last {
			run++
		} else {
			last, run = b, 1
		}
		if run == 5 {
			last, run = 1-last, 1
		}
	}
	return last, run
}
