package mcp2515

import "testing"

// What the kernel's can_calc_bittiming (drivers/net/can/dev/calc_bittiming.c) gives
// with mcp251x's bit-timing constants (drivers/net/can/spi/mcp251x.c) for 8, 16 and
// 20 MHz crystals, plus the 12 MHz 125 kbit/s row of Marc Kleine-Budde's table in
// https://github.com/linux-can/can-utils/issues/359.
func TestCalcBitTimingKernelTable(t *testing.T) {
	tests := []struct {
		osc, rate, sp           uint32
		brp, prop, ps1, ps2, tq uint32
		samplePoint             uint32
		cnf1, cnf2, cnf3        byte
	}{
		{8_000_000, 125_000, 0, 2, 6, 7, 2, 16, 875, 0x01, 0xB5, 0x01},
		{8_000_000, 250_000, 0, 1, 6, 7, 2, 16, 875, 0x00, 0xB5, 0x01},
		{8_000_000, 500_000, 0, 1, 2, 3, 2, 8, 750, 0x00, 0x91, 0x01},
		{16_000_000, 125_000, 0, 4, 6, 7, 2, 16, 875, 0x03, 0xB5, 0x01},
		{16_000_000, 250_000, 0, 2, 6, 7, 2, 16, 875, 0x01, 0xB5, 0x01},
		{16_000_000, 500_000, 0, 1, 6, 7, 2, 16, 875, 0x00, 0xB5, 0x01},
		{16_000_000, 1_000_000, 0, 1, 2, 3, 2, 8, 750, 0x00, 0x91, 0x01},
		{20_000_000, 125_000, 0, 5, 6, 7, 2, 16, 875, 0x04, 0xB5, 0x01},
		{20_000_000, 250_000, 0, 2, 8, 8, 3, 20, 850, 0x01, 0xBF, 0x02},
		{20_000_000, 500_000, 0, 1, 8, 8, 3, 20, 850, 0x00, 0xBF, 0x02},
		{20_000_000, 1_000_000, 0, 1, 3, 3, 3, 10, 700, 0x00, 0x92, 0x02},
		{20_000_000, 1_000_000, 875, 1, 3, 4, 2, 10, 800, 0x00, 0x9A, 0x01},
		{12_000_000, 125_000, 0, 3, 6, 7, 2, 16, 875, 0x02, 0xB5, 0x01},
	}
	for _, tc := range tests {
		got, err := CalcBitTiming(tc.osc, tc.rate, tc.sp, false)
		if err != nil {
			t.Errorf("CalcBitTiming(%d, %d, %d): %v", tc.osc, tc.rate, tc.sp, err)
			continue
		}
		want := BitTiming{
			Bitrate: tc.rate, SamplePoint: tc.samplePoint,
			TQ:      uint32(uint64(tc.brp) * 2_000_000_000 / uint64(tc.osc)),
			PropSeg: tc.prop, PhaseSeg1: tc.ps1, PhaseSeg2: tc.ps2, SJW: 1, BRP: tc.brp,
			CNF1: tc.cnf1, CNF2: tc.cnf2, CNF3: tc.cnf3,
		}
		if got != want {
			t.Errorf("CalcBitTiming(%d, %d, %d)\n got %+v\nwant %+v", tc.osc, tc.rate, tc.sp, got, want)
		}
		if got.bitTQ() != tc.tq {
			t.Errorf("CalcBitTiming(%d, %d, %d): %d TQ per bit, want %d", tc.osc, tc.rate, tc.sp, got.bitTQ(), tc.tq)
		}
		// The registers decode back to the same timing.
		back, err := TimingFromCNF(tc.osc, got.CNF1, got.CNF2, got.CNF3)
		if err != nil {
			t.Errorf("TimingFromCNF(%s): %v", got, err)
			continue
		}
		back.Error = got.Error
		if back != got {
			t.Errorf("TimingFromCNF round trip\n got %+v\nwant %+v", back, got)
		}
	}
}

func TestCalcBitTimingErrors(t *testing.T) {
	tests := []struct {
		osc, rate, sp uint32
		want          string
	}{
		{8_000_000, 1_000_000, 0, "8 MHz oscillator cannot make 1000000 bit/s: nearest is 666666 bit/s (33.3 % off, limit 5 %); use a 16 MHz crystal or a lower bitrate"},
		{25_000_000, 1_000, 0, "25 MHz oscillator cannot make 1000 bit/s: the slowest it can do is 7812 bit/s (brp 64, 25 TQ per bit); use a higher bitrate or a slower crystal"},
		{30_000_000, 500_000, 0, "oscillator 30000000 Hz is out of range: the MCP2515 runs from 1 MHz to 25 MHz (write e.g. 16000000)"},
		{16_000_000, 0, 0, "bitrate 0 bit/s is impossible: give the bus's bitrate, e.g. 500000"},
		{16_000_000, 500_000, 1000, "sample point 1.000 is not inside the bit: give 0.001..0.999, or 0 for the default"},
		{16_000_000, 500_000, 150, "sample point 0.150 is too early for 500000 bit/s on a 16 MHz oscillator: it leaves no propagation segment; use 0.5 or later"},
	}
	for _, tc := range tests {
		_, err := CalcBitTiming(tc.osc, tc.rate, tc.sp, false)
		if err == nil || err.Error() != tc.want {
			t.Errorf("CalcBitTiming(%d, %d, %d) = %v\nwant %s", tc.osc, tc.rate, tc.sp, err, tc.want)
		}
	}
}

// A bitrate error below the kernel's 5 % is accepted and reported in per mille.
func TestCalcBitTimingInexact(t *testing.T) {
	got, err := CalcBitTiming(16_000_000, 95_000, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if got.Error == 0 || got.Error > 50 || got.Bitrate == 95_000 {
		t.Errorf("got %+v: want an inexact bitrate within 5 %%", got)
	}
	if d := absDiff(got.Bitrate, 95_000); d*1000/95_000 != got.Error {
		t.Errorf("Error %d per mille does not match bitrate %d", got.Error, got.Bitrate)
	}
}

// The kernel programs 6 TQ per bit for 12 MHz at 1 Mbit/s; CalcBitTiming matches it
// and Check names the datasheet rule it breaks.
func TestCalcBitTimingKernelButNotDatasheet(t *testing.T) {
	got, err := CalcBitTiming(12_000_000, 1_000_000, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "bitrate 1000000 sample-point 0.666 tq 166 prop-seg 1 phase-seg1 2 phase-seg2 2 sjw 1 brp 1 cnf1 0x00 cnf2 0x88 cnf3 0x01" {
		t.Errorf("got %s", got)
	}
	const want = "6 TQ per bit (1+1+2+2) is out of range: the MCP2515 needs 8..25"
	if err := got.Check(); err == nil || err.Error() != want {
		t.Errorf("Check() = %v, want %s", err, want)
	}
}

func TestBitTimingString(t *testing.T) {
	got, err := CalcBitTiming(16_000_000, 500_000, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	const want = "bitrate 500000 sample-point 0.875 tq 125 prop-seg 6 phase-seg1 7 phase-seg2 2 sjw 1 brp 1 cnf1 0x00 cnf2 0xf5 cnf3 0x01"
	if got.String() != want {
		t.Errorf("String() = %q\nwant %q", got, want)
	}
	if !got.TripleSampling || Bits(got.CNF2)&CNF2SAM == 0 {
		t.Errorf("triple sampling not packed: %+v", got)
	}
}

func TestTimingFromSegments(t *testing.T) {
	// Datasheet example: 20 MHz, BRP field 4 (kernel brp 5), 1+2+7+6 = 16 TQ, 125 kbit/s.
	got, err := TimingFromSegments(20_000_000, 5, 2, 7, 6, 1)
	if err != nil {
		t.Fatal(err)
	}
	const want = "bitrate 125000 sample-point 0.625 tq 500 prop-seg 2 phase-seg1 7 phase-seg2 6 sjw 1 brp 5 cnf1 0x04 cnf2 0xb1 cnf3 0x05"
	if got.String() != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

	bad := []struct {
		brp, prop, ps1, ps2, sjw uint32
		want                     string
	}{
		{0, 2, 7, 6, 1, "brp 0 is out of range: the MCP2515 divides by 1..64 (CNF1.BRP 0..63)"},
		{65, 2, 7, 6, 1, "brp 65 is out of range: the MCP2515 divides by 1..64 (CNF1.BRP 0..63)"},
		{1, 9, 7, 6, 1, "prop-seg 9 TQ is out of range: the MCP2515 allows 1..8"},
		{1, 2, 0, 6, 1, "phase-seg1 0 TQ is out of range: the MCP2515 allows 1..8"},
		{1, 2, 7, 1, 1, "phase-seg2 1 TQ is out of range: the MCP2515 allows 2..8 (at least the 2-TQ information processing time)"},
		{1, 2, 7, 6, 5, "sjw 5 TQ is out of range: the MCP2515 allows 1..4"},
		{1, 1, 2, 4, 1, "prop-seg 1 + phase-seg1 2 < phase-seg2 4: the MCP2515 needs PropSeg+PS1 ≥ PS2 (sample point too early)"},
		{1, 6, 7, 2, 2, "phase-seg2 2 ≤ sjw 2: the MCP2515 needs PS2 > SJW; lower sjw"},
		{1, 1, 2, 2, 1, "6 TQ per bit (1+1+2+2) is out of range: the MCP2515 needs 8..25"},
	}
	for _, tc := range bad {
		_, err := TimingFromSegments(16_000_000, tc.brp, tc.prop, tc.ps1, tc.ps2, tc.sjw)
		if err == nil || err.Error() != tc.want {
			t.Errorf("TimingFromSegments(%v) = %v\nwant %s", tc, err, tc.want)
		}
	}
}

func TestTimingFromCNF(t *testing.T) {
	// autowp's 16 MHz 250k: SJW 2, SAM, 1+2+7+6, CNF3 with SOF set.
	got, err := TimingFromCNF(16_000_000, 0x41, 0xF1, 0x85)
	if err != nil {
		t.Fatal(err)
	}
	const want = "bitrate 250000 sample-point 0.625 tq 250 prop-seg 2 phase-seg1 7 phase-seg2 6 sjw 2 brp 2 cnf1 0x41 cnf2 0xf1 cnf3 0x85"
	if got.String() != want || !got.TripleSampling {
		t.Errorf("got  %s (triple %v)\nwant %s", got, got.TripleSampling, want)
	}

	// BTLMODE clear: PS2 = max(PS1, IPT) = 7, whatever CNF3 says.
	got, err = TimingFromCNF(16_000_000, 0x01, 0x31, 0x00)
	if err != nil {
		t.Fatal(err)
	}
	if got.PhaseSeg2 != 7 || got.Bitrate != 235294 {
		t.Errorf("BTLMODE=0: got %s, want phase-seg2 7, bitrate 235294", got)
	}

	// autowp's 8 MHz 1M: 4 TQ and PS2 = 1.
	_, err = TimingFromCNF(8_000_000, 0x00, 0x80, 0x80)
	const wantErr = "cnf1 0x00 cnf2 0x80 cnf3 0x80: phase-seg2 1 TQ is out of range: the MCP2515 allows 2..8 (at least the 2-TQ information processing time)"
	if err == nil || err.Error() != wantErr {
		t.Errorf("TimingFromCNF(8 MHz, 00 80 80) = %v\nwant %s", err, wantErr)
	}
}

func TestDefaultSamplePoint(t *testing.T) {
	for rate, want := range map[uint32]uint32{125_000: 875, 500_000: 875, 500_001: 800, 800_000: 800, 800_001: 750, 1_000_000: 750} {
		if got := DefaultSamplePoint(rate); got != want {
			t.Errorf("DefaultSamplePoint(%d) = %d, want %d", rate, got, want)
		}
	}
}

// Every oscillator and bitrate either yields a timing the registers reproduce, or an
// error; never a panic or a zero prescaler.
func TestCalcBitTimingSweep(t *testing.T) {
	oscs := []uint32{1_000_000, 4_000_000, 7_372_800, 8_000_000, 10_000_000, 12_000_000, 16_000_000, 20_000_000, 24_000_000, 25_000_000}
	rates := []uint32{10_000, 20_000, 33_333, 50_000, 83_333, 100_000, 125_000, 250_000, 500_000, 800_000, 1_000_000}
	for _, osc := range oscs {
		for _, rate := range rates {
			for _, sp := range []uint32{0, 500, 700, 875, 900} {
				got, err := CalcBitTiming(osc, rate, sp, false)
				if err != nil {
					continue
				}
				if got.Error > 50 || got.BRP == 0 || got.PropSeg == 0 {
					t.Errorf("CalcBitTiming(%d, %d, %d) = %+v", osc, rate, sp, got)
				}
				back, err := TimingFromCNF(osc, got.CNF1, got.CNF2, got.CNF3)
				if err == nil {
					back.Error = got.Error
					if back != got {
						t.Errorf("round trip %d %d %d:\n got %+v\nwant %+v", osc, rate, sp, back, got)
					}
				} else if got.Check() == nil {
					t.Errorf("TimingFromCNF refuses what Check accepts: %v", err)
				}
			}
		}
	}
}

func BenchmarkCalcBitTiming(b *testing.B) {
	for b.Loop() {
		if _, err := CalcBitTiming(16_000_000, 500_000, 0, false); err != nil {
			b.Fatal(err)
		}
	}
}
