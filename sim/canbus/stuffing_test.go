package canbus

import (
	"math/rand/v2"
	"testing"

	"go.einride.tech/can"
)

// stuffBitsInData counts the stuff bits inserted while the data field of f is on
// the wire (SOF..data stuffed, minus SOF..DLC stuffed), from the unstuffed bits.
func stuffBitsInData(f can.Frame) int {
	var r rawBits
	r.build(f)
	end := r.n - 15
	header := end - 8*int(f.Length)
	count := func(n int) int {
		s, run := 0, newStuffRun()
		for _, b := range r.b[:n] {
			if run.push(b) {
				s++
			}
		}
		return s
	}
	return count(end) - count(header)
}

// The most-stuffing data puts a stuff bit after every four data bits once the run
// in progress is complete, the least-stuffing data none; over the whole frame
// (with its CRC) neither is beaten by random data of the same ID and length. Over
// every standard ID the most-stuffed 8-byte frame stays within the classic bound
// of (34 + 8·8 − 1)/4 = 24 stuff bits (135 bits with the intermission).
func TestStuffedDataExtremes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, base := range []can.Frame{
		{ID: 0x123, Length: 8}, {ID: 0x000, Length: 8}, {ID: 0x7FF, Length: 8}, {ID: 0x555, Length: 4},
		{ID: 0x0F0, Length: 1}, {ID: 0x18FEF100, IsExtended: true, Length: 8}, {ID: 0x1FFFFFFF, IsExtended: true, Length: 3},
	} {
		most, least := base, base
		most.Data, least.Data = StuffedData(base, true), StuffedData(base, false)
		n := 8 * int(base.Length)
		if got := stuffBitsInData(least); got > 1 {
			t.Errorf("%v least: %d stuff bits in the data, want at most 1 (the last byte chosen for the CRC)", base, got)
		}
		if got, min := stuffBitsInData(most), (n-8)/4; got < min {
			t.Errorf("%v most: %d stuff bits in the data, want at least %d", base, got, min)
		}
		hi, lo := FrameBits(most), FrameBits(least)
		for range 2000 {
			f := base
			for i := range f.Length {
				f.Data[i] = byte(rng.Uint32())
			}
			if b := FrameBits(f); b > hi || b < lo {
				t.Fatalf("%v: random data %x gives %d bits, outside [%d, %d]", base, f.Data, b, lo, hi)
			}
		}
		t.Logf("%#x ext=%v dlc %d: least %d bits (%x), most %d bits (%x)", base.ID, base.IsExtended, base.Length, lo, least.Data, hi, most.Data)
	}
	worst, worstID := 0, uint32(0)
	for id := uint32(0); id <= can.MaxID; id++ {
		f := can.Frame{ID: id, Length: 8}
		f.Data = StuffedData(f, true)
		if b := FrameBits(f); b > worst {
			worst, worstID = b, id
		}
	}
	if worst < 8*8+47+16 || worst > 135 {
		t.Errorf("the most-stuffed 8-byte standard frame over all IDs is %d bits (ID %#x), want 127..135", worst, worstID)
	}
	t.Logf("most-stuffed 8-byte standard frame: %d bits, ID %#x", worst, worstID)
	if d := StuffedData(can.Frame{ID: 1}, true); d != (can.Data{}) {
		t.Errorf("dlc 0: %x, want no data", d)
	}
}
