package bcm2835

import "testing"

func TestDivider(t *testing.T) {
	for _, c := range []struct {
		core, want, cdiv, sclk uint32
	}{
		{250_000_000, 10_000_000, 26, 9_615_384},  // 25 rounded up to even
		{400_000_000, 10_000_000, 40, 10_000_000}, // exact
		{500_000_000, 10_000_000, 50, 10_000_000},
		{250_000_000, 3_000_000, 84, 2_976_190}, // ceil(83.3) = 84
		{250_000_000, 125_000_000, 2, 125_000_000},
		{250_000_000, 500_000_000, 2, 125_000_000}, // core/2 is the fastest
		{250_000_000, 3_815, 65532, 3_814},         // ceil = 65531 → 65532, still below 65536
		{250_000_000, 3_814, 0, 3_814},             // 65548 ≥ 65536 → 0 (= 65536)
		{250_000_000, 0, 0, 3_814},
	} {
		cdiv, sclk := Divider(c.core, c.want)
		if cdiv != c.cdiv || sclk != c.sclk {
			t.Errorf("Divider(%d, %d) = %d, %d; want %d, %d", c.core, c.want, cdiv, sclk, c.cdiv, c.sclk)
		}
		if c.want != 0 && sclk > c.want {
			t.Errorf("Divider(%d, %d): SCLK %d above the request", c.core, c.want, sclk)
		}
	}
}

func TestEffectiveDividerAndWire(t *testing.T) {
	for clk, want := range map[uint32]uint32{0: 65536, 1: 65536, 2: 2, 5: 4, 26: 26, 0x1_0028: 40, 0xFFFF: 65534} {
		if got := EffectiveDivider(clk); got != want {
			t.Errorf("EffectiveDivider(%#x) = %d, want %d", clk, got, want)
		}
	}
	if got := WireNs(250_000_000, 26, 2); got != 1872 { // 2 × 9 × 26 / 250 MHz
		t.Errorf("WireNs(2 bytes, CDIV 26 @ 250 MHz) = %d, want 1872", got)
	}
	if got := WireNs(250_000_000, 26, 16); got != 14976 {
		t.Errorf("WireNs(16 bytes) = %d, want 14976", got)
	}
	if got := WireNs(1, 0, 1<<30); got <= 0 {
		t.Errorf("WireNs overflowed: %d", got)
	}
	// A divider sized for a Pi 3's 400 MHz turbo clock runs slower when it idles at 250.
	lo, hi := SCLKRange(250_000_000, 400_000_000, 40)
	if lo != 6_250_000 || hi != 10_000_000 {
		t.Errorf("SCLKRange(250–400 MHz, CDIV 40) = %d..%d, want 6250000..10000000", lo, hi)
	}
}
