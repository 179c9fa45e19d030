package canbus

import (
	"testing"

	"go.einride.tech/can"
)

func TestCRC15CheckValue(t *testing.T) {
	// CRC-15/CAN catalogue check value: "123456789" → 0x059E.
	var bits []byte
	for _, c := range []byte("123456789") {
		for i := 7; i >= 0; i-- {
			bits = append(bits, c>>uint(i)&1)
		}
	}
	if got := crc15(bits); got != 0x059E {
		t.Fatalf("crc15(123456789) = %#04x, want 0x059e", got)
	}
}

func TestFrameBits(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    can.Frame
		want int
	}{
		// SOF..data is 15 zeros, DLC 1000, 64 zeros = 83 bits: 3 stuff bits in the
		// first 15 zeros, one after DLC's 000 + 2 data zeros, then 12 in the remaining
		// 62 zeros; CRC 0x145B = 001010001011011 adds none (2 zeros + 00 then 1).
		// 98 (incl. 15 CRC) + 16 stuff + 13 tail = 127.
		{"std 000 8×00", can.Frame{ID: 0, Length: 8}, 127},
		// 11 ones → 2 stuff; 64 ones after DLC's 000 → 12 stuff (4 ones left); CRC
		// 0x4C89 starts with 1 → 1 stuff; 98 + 15 + 13 = 126.
		{"std 7FF 8×FF", can.Frame{ID: 0x7FF, Length: 8, Data: can.Data{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}}, 126},
		{"std 123 dlc0", can.Frame{ID: 0x123}, 48},
		{"std 555 8×55", can.Frame{ID: 0x555, Length: 8, Data: can.Data{0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55}}, 112},
		{"ext 1FFFFFFF 8×00", can.Frame{ID: 0x1FFFFFFF, IsExtended: true, Length: 8}, 151},
		{"ext remote", can.Frame{ID: 0x12345678, IsExtended: true, IsRemote: true}, 69},
	} {
		if got := FrameBits(tc.f); got != tc.want {
			t.Errorf("%s: FrameBits = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestArbitrationKeyOrder(t *testing.T) {
	// Lower key wins: each frame beats every frame after it.
	order := []can.Frame{
		{ID: 0x0FF},
		{ID: 0x100},                           // std data
		{ID: 0x100, IsRemote: true},           // std remote: RTR recessive
		{ID: 0x100 << 18, IsExtended: true},   // ext, same base ID: SRR/IDE recessive
		{ID: 0x100<<18 | 1, IsExtended: true}, // higher extended ID
		{ID: 0x100<<18 | 1, IsExtended: true, IsRemote: true}, // ext remote
		{ID: 0x101},
	}
	for i := 0; i+1 < len(order); i++ {
		if a, b := arbKey(order[i]), arbKey(order[i+1]); a >= b {
			t.Errorf("%v (key %#x) should beat %v (key %#x)", order[i], a, order[i+1], b)
		}
	}
}

func TestFrameBitsNoAlloc(t *testing.T) {
	f := can.Frame{ID: 0x123, Length: 8}
	if n := testing.AllocsPerRun(100, func() { _ = FrameBits(f) }); n != 0 {
		t.Fatalf("FrameBits allocates %v times", n)
	}
}
