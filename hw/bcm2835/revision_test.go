package bcm2835

import "testing"

// A revision code alone names the SoC and the core clock range Detect reports.
func TestFromRevision(t *testing.T) {
	for _, tc := range []struct {
		rev      uint32
		soc      SoC
		min, max uint32
	}{
		{0x900092, SoCBCM2835, 250_000_000, 400_000_000}, // Zero
		{0x900032, SoCBCM2835, 250_000_000, 250_000_000}, // 1 B+
		{0xa01041, SoCBCM2836, 250_000_000, 250_000_000}, // 2 B
		{0xa02082, SoCBCM2837, 250_000_000, 400_000_000}, // 3 B
		{0xc03111, SoCBCM2711, 200_000_000, 500_000_000}, // 4 B
	} {
		b, err := FromRevision(tc.rev)
		if err != nil {
			t.Errorf("%06x: %v", tc.rev, err)
			continue
		}
		if b.SoC != tc.soc || b.CoreClockMinHz != tc.min || b.CoreClockMaxHz != tc.max || b.PeriBase != periBase(tc.soc) {
			t.Errorf("%06x: %v %d..%d Hz base %#x, want %v %d..%d Hz", tc.rev, b.SoC, b.CoreClockMinHz, b.CoreClockMaxHz, b.PeriBase, tc.soc, tc.min, tc.max)
		}
	}
	if _, err := FromRevision(0xd04170); err == nil {
		t.Error("a Pi 5 (BCM2712) revision code was accepted")
	}
}
