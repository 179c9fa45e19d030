package canwire

import (
	"math/rand/v2"
	"testing"

	"go.einride.tech/can"

	"cand/sim/canbus"
)

// CRC-15/CAN's check value in the CRC catalogue (reveng.sourceforge.io,
// "CRC-15/CAN"): the CRC of the ASCII bytes "123456789" is 0x059E.
func TestCRCCheckValue(t *testing.T) {
	var crc uint16
	for _, b := range []byte("123456789") {
		crc = crcByte(crc, b)
	}
	if crc != 0x059E {
		t.Fatalf("CRC-15 of 123456789 = %#04x, want 0x059e", crc)
	}
}

// The simulated bus (sim/canbus) builds each frame bit by bit and stuffs it bit by
// bit, a model written apart from this package: for random frames of every kind
// the two counts agree.
func TestBitsMatchSimulatedBus(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200_000 {
		f := randomFrame(rng, i)
		if got, want := Bits(&f), canbus.FrameBits(f); got != uint32(want) {
			t.Fatalf("%v: Bits = %d, the simulated bus counts %d", f, got, want)
		}
	}
}

// randomFrame draws a frame; every fourth has data of all-equal bytes, which make
// long runs and so many stuff bits.
func randomFrame(rng *rand.Rand, i int) can.Frame {
	f := can.Frame{IsExtended: rng.IntN(2) == 0, IsRemote: rng.IntN(8) == 0, Length: uint8(rng.IntN(9))}
	if f.IsExtended {
		f.ID = rng.Uint32() & can.MaxExtendedID
	} else {
		f.ID = rng.Uint32() & can.MaxID
	}
	if !f.IsRemote {
		fill := byte(0)
		if rng.IntN(2) == 0 {
			fill = 0xFF
		}
		for j := range int(f.Length) {
			if i%4 == 0 {
				f.Data[j] = fill
			} else {
				f.Data[j] = byte(rng.Uint32())
			}
		}
	}
	return f
}

// Bits runs on the frame path: it never allocates.
func TestBitsAllocatesNothing(t *testing.T) {
	f := can.Frame{ID: 0x18DAF110, IsExtended: true, Length: 8, Data: can.Data{1, 2, 3, 4, 5, 6, 7, 8}}
	var sum uint32
	if n := testing.AllocsPerRun(1000, func() { sum += Bits(&f) }); n != 0 {
		t.Fatalf("Bits allocates %v times per call", n)
	}
	if sum == 0 {
		t.Fatal("no bits counted")
	}
}

func BenchmarkBits(b *testing.B) {
	for _, bc := range []struct {
		name string
		f    can.Frame
	}{
		{"std-dlc8", can.Frame{ID: 0x123, Length: 8, Data: can.Data{1, 2, 3, 4, 5, 6, 7, 8}}},
		{"ext-dlc8", can.Frame{ID: 0x18DAF110, IsExtended: true, Length: 8, Data: can.Data{1, 2, 3, 4, 5, 6, 7, 8}}},
		{"std-dlc0", can.Frame{ID: 0x7FF}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var sum uint32
			for b.Loop() {
				sum += Bits(&bc.f)
			}
			if sum == 0 {
				b.Fatal("no bits counted")
			}
		})
	}
}

// The simulated bus's bit-by-bit count, for comparison.
func BenchmarkSimulatedBusBits(b *testing.B) {
	f := can.Frame{ID: 0x18DAF110, IsExtended: true, Length: 8, Data: can.Data{1, 2, 3, 4, 5, 6, 7, 8}}
	var sum int
	for b.Loop() {
		sum += canbus.FrameBits(f)
	}
	if sum == 0 {
		b.Fatal("no bits counted")
	}
}
