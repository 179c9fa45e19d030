package mcp2515

import (
	"fmt"
	"strconv"
)

// Bit timing of the MCP2515 (datasheet §5, pp. 40–41) and the Linux kernel's way of
// choosing it (drivers/net/can/dev/calc_bittiming.c with the constants of
// drivers/net/can/spi/mcp251x.c), so that a user moving from the kernel driver
// programs the very same CNF1/CNF2/CNF3.
//
// The kernel sees the MCP2515 as a controller clocked at fosc/2 whose prescaler is
// brp = BRP+1: TQ = 2·(BRP+1)/fosc = brp/(fosc/2). BitTiming.BRP is that kernel brp,
// the number `ip -details link show` prints; the register field CNF1.BRP holds BRP−1.

// Kernel bit-timing constants for the mcp251x (struct can_bittiming_const) and the
// calculator's limit.
const (
	timingSyncSeg   = 1  // CAN_SYNC_SEG
	timingTSeg1Min  = 3  // PropSeg+PS1 ≥ 1+1, rounded by the kernel to 3
	timingTSeg1Max  = 16 // PropSeg ≤ 8, PS1 ≤ 8
	timingTSeg2Min  = 2  // PS2 ≥ 2 (IPT)
	timingTSeg2Max  = 8  // PS2 ≤ 8
	timingSJWMax    = 4  // SJW ≤ 4
	timingBRPMin    = 1  // kernel brp 1..64 = CNF1.BRP 0..63
	timingBRPMax    = 64 //
	timingMaxError  = 50 // CAN_CALC_MAX_ERROR: 5.0 %, in per mille
	timingOscMinHz  = 1_000_000
	timingOscMaxHz  = 25_000_000 // the kernel's mcp251x probe refuses outside 1..25 MHz
	timingMinTQ     = 8          // datasheet: a bit is 8..25 TQ
	timingMaxTQ     = 25         //
	timingSegMax    = 8          // PropSeg, PS1, PS2 ≤ 8 TQ (3-bit fields)
	timingRefLow    = 875        // CiA default sample point ≤ 500 kbit/s, per mille
	timingRefMid    = 800        // ≤ 800 kbit/s
	timingRefHigh   = 750        // above 800 kbit/s
	timingKiloLow   = 500_000
	timingKiloHigh  = 800_000
	timingPerMille  = 1000
	timingNsPerSec  = 1_000_000_000
	timingPS2IPT    = 2 // information processing time, TQ
	timingUnsetUint = ^uint32(0)
)

// BitTiming is one complete MCP2515 bit timing, in the kernel's terms and as the
// three configuration registers.
type BitTiming struct {
	Bitrate     uint32 // the bitrate this timing really makes, bit/s
	SamplePoint uint32 // per mille of the bit (875 = 87.5 %), as the kernel counts it
	TQ          uint32 // time quantum, ns (truncated, as the kernel does)
	PropSeg     uint32 // TQ
	PhaseSeg1   uint32 // TQ
	PhaseSeg2   uint32 // TQ
	SJW         uint32 // TQ
	// BRP is the kernel's prescaler (1..64): TQ = BRP·2/fosc. CNF1.BRP holds BRP−1.
	BRP uint32
	// TripleSampling is CNF2.SAM: three samples per bit (kernel ctrlmode triple-sampling).
	TripleSampling bool

	CNF1, CNF2, CNF3 byte

	// Error is how far Bitrate is from the requested bitrate, in per mille of the
	// request (the kernel's unit; at most 50). 0 when decoded from registers.
	Error uint32
}

// CalcBitTiming chooses the bit timing for bitrate on an MCP2515 clocked by oscHz
// exactly as the Linux kernel's can_calc_bittiming does for the mcp251x driver.
// samplePoint is the wanted sample point in per mille; 0 takes the kernel's CiA
// default (87.5 % up to 500 kbit/s, 80 % up to 800 kbit/s, 75 % above).
// tripleSampling sets CNF2.SAM. It refuses, like the kernel, a timing whose bitrate
// is more than 5 % off. It does not refuse timings the kernel would program although
// they break a datasheet rule (fewer than 8 TQ per bit, e.g. 12 MHz at 1 Mbit/s):
// call Check for that.
func CalcBitTiming(oscHz, bitrate, samplePoint uint32, tripleSampling bool) (BitTiming, error) {
	if err := checkOsc(oscHz); err != nil {
		return BitTiming{}, err
	}
	if bitrate == 0 {
		return BitTiming{}, fmt.Errorf("bitrate 0 bit/s is impossible: give the bus's bitrate, e.g. 500000")
	}
	if samplePoint >= timingPerMille {
		return BitTiming{}, fmt.Errorf("sample point %s is not inside the bit: give 0.001..0.999, or 0 for the default", perMille(samplePoint))
	}
	ref := samplePoint
	if ref == 0 {
		ref = DefaultSamplePoint(bitrate)
	}
	clock := oscHz / 2

	bestBitrateErr := timingUnsetUint
	bestSPErr := timingUnsetUint
	var bestTSeg, bestBRP uint32
	// tseg counts half steps: even = round the prescaler down, odd = round it up.
	for tseg := uint32(timingTSeg1Max+timingTSeg2Max)*2 + 1; tseg >= (timingTSeg1Min+timingTSeg2Min)*2; tseg-- {
		tsegAll := timingSyncSeg + tseg/2
		brp := clock/(tsegAll*bitrate) + tseg%2
		if brp < timingBRPMin || brp > timingBRPMax {
			continue
		}
		got := clock / (brp * tsegAll)
		bitrateErr := absDiff(bitrate, got)
		if bitrateErr > bestBitrateErr {
			continue
		}
		if bitrateErr < bestBitrateErr {
			bestSPErr = timingUnsetUint
		}
		_, _, _, spErr := splitTSeg(ref, tseg/2)
		if spErr >= bestSPErr {
			continue
		}
		bestSPErr, bestBitrateErr = spErr, bitrateErr
		bestTSeg, bestBRP = tseg/2, brp
		if bitrateErr == 0 && spErr == 0 {
			break
		}
	}
	if bestBRP == 0 {
		slowest := clock / (timingBRPMax * (timingSyncSeg + timingTSeg1Max + timingTSeg2Max))
		return BitTiming{}, fmt.Errorf("%s oscillator cannot make %d bit/s: the slowest it can do is %d bit/s (brp %d, %d TQ per bit); use a higher bitrate or a slower crystal",
			mhz(oscHz), bitrate, slowest, timingBRPMax, timingSyncSeg+timingTSeg1Max+timingTSeg2Max)
	}
	perMilleErr := uint32(uint64(bestBitrateErr) * timingPerMille / uint64(bitrate))
	if perMilleErr > timingMaxError {
		nearest := clock / (bestBRP * (timingSyncSeg + bestTSeg))
		return BitTiming{}, fmt.Errorf("%s oscillator cannot make %d bit/s: nearest is %d bit/s (%d.%d %% off, limit %d %%); %s",
			mhz(oscHz), bitrate, nearest, perMilleErr/10, perMilleErr%10, timingMaxError/10, suggestCrystal(oscHz, bitrate))
	}

	tseg1, tseg2, sp, _ := splitTSeg(ref, bestTSeg)
	if tseg1 < 2 {
		// The kernel would program PropSeg 0 here (a sample point of ~20 %); no
		// MCP2515 can take that.
		return BitTiming{}, fmt.Errorf("sample point %s is too early for %d bit/s on a %s oscillator: it leaves no propagation segment; use 0.5 or later",
			perMille(ref), bitrate, mhz(oscHz))
	}
	t := BitTiming{
		SamplePoint:    sp,
		TQ:             uint32(uint64(bestBRP) * timingNsPerSec / uint64(clock)),
		PropSeg:        tseg1 / 2,
		PhaseSeg1:      tseg1 - tseg1/2,
		PhaseSeg2:      tseg2,
		BRP:            bestBRP,
		TripleSampling: tripleSampling,
		Error:          perMilleErr,
	}
	// SJW default since Linux 6.3: half of PS2, at most PS1, at least 1. Linux before
	// 6.3 always chose 1; the two agree whenever PS2 < 4, which covers every default
	// timing of the reference table.
	t.SJW = max(1, min(t.PhaseSeg1, t.PhaseSeg2/2))
	if t.SJW > timingSJWMax {
		t.SJW = timingSJWMax
	}
	t.Bitrate = clock / (t.BRP * t.bitTQ())
	t.pack()
	return t, nil
}

// DefaultSamplePoint is the kernel's (CiA's) sample point for bitrate, per mille.
func DefaultSamplePoint(bitrate uint32) uint32 {
	switch {
	case bitrate > timingKiloHigh:
		return timingRefHigh
	case bitrate > timingKiloLow:
		return timingRefMid
	}
	return timingRefLow
}

// splitTSeg divides tseg TQ (everything but SyncSeg) into tseg1 and tseg2 so that the
// sample point is as close to ref as possible without passing it: the kernel's
// can_update_sample_point with the mcp251x limits.
func splitTSeg(ref, tseg uint32) (tseg1, tseg2, sp, spErr uint32) {
	spErr = timingUnsetUint
	all := tseg + timingSyncSeg
	for i := uint32(0); i <= 1; i++ {
		t2 := int64(all) - int64(ref*all/timingPerMille) - int64(i)
		t2 = min(max(t2, timingTSeg2Min), timingTSeg2Max)
		t1 := int64(tseg) - t2
		if t1 < 0 {
			// The kernel's unsigned arithmetic wraps here and yields a sample point
			// past the end of the bit, which it never accepts.
			continue
		}
		if t1 > timingTSeg1Max {
			t1 = timingTSeg1Max
			t2 = int64(tseg) - t1
		}
		p := uint32(timingPerMille * (int64(all) - t2) / int64(all))
		e := absDiff(ref, p)
		if p <= ref && e < spErr {
			sp, spErr = p, e
			tseg1, tseg2 = uint32(t1), uint32(t2)
		}
	}
	return tseg1, tseg2, sp, spErr
}

// TimingFromCNF decodes the three configuration registers of an MCP2515 clocked by
// oscHz and checks them against the datasheet's rules (see Check). With CNF2.BTLMODE
// clear, PS2 is the greater of PS1 and the 2-TQ information processing time, as the
// chip does.
func TimingFromCNF(oscHz uint32, cnf1, cnf2, cnf3 byte) (BitTiming, error) {
	if err := checkOsc(oscHz); err != nil {
		return BitTiming{}, err
	}
	f := DecodeCNF(cnf1, cnf2, cnf3)
	t := BitTiming{
		BRP:            uint32(f.BRP) + 1,
		SJW:            uint32(f.SJW) + 1,
		PropSeg:        uint32(f.PRSEG) + 1,
		PhaseSeg1:      uint32(f.PHSEG1) + 1,
		PhaseSeg2:      uint32(f.PHSEG2) + 1,
		TripleSampling: f.SAM,
	}
	if !f.BTLMODE {
		t.PhaseSeg2 = max(t.PhaseSeg1, timingPS2IPT)
	}
	t.derive(oscHz)
	t.CNF1, t.CNF2, t.CNF3 = cnf1, cnf2, cnf3
	if err := t.Check(); err != nil {
		return BitTiming{}, fmt.Errorf("cnf1 0x%02x cnf2 0x%02x cnf3 0x%02x: %w", cnf1, cnf2, cnf3, err)
	}
	return t, nil
}

// TimingFromSegments builds the timing from the kernel's brp (1..64, TQ = brp·2/fosc)
// and the segment lengths in TQ, checks it against the datasheet's rules (see
// Check), and packs CNF1..CNF3 with BTLMODE set. Triple sampling is off; set
// TripleSampling and call Pack to change it.
func TimingFromSegments(oscHz, brp, prop, ps1, ps2, sjw uint32) (BitTiming, error) {
	if err := checkOsc(oscHz); err != nil {
		return BitTiming{}, err
	}
	t := BitTiming{BRP: brp, PropSeg: prop, PhaseSeg1: ps1, PhaseSeg2: ps2, SJW: sjw}
	if err := t.Check(); err != nil {
		return BitTiming{}, err
	}
	t.derive(oscHz)
	t.pack()
	return t, nil
}

// Pack recomputes CNF1..CNF3 from the fields (after TripleSampling or SJW changed).
func (t *BitTiming) Pack() { t.pack() }

// Check tests the timing against the MCP2515 datasheet's rules (DS20001801J §5.3–5.5):
// BRP 1..64, PropSeg 1..8, PS1 1..8, PS2 2..8, SJW 1..4 TQ; PropSeg+PS1 ≥ PS2;
// PS2 > SJW; 8..25 TQ per bit.
func (t BitTiming) Check() error {
	switch {
	case t.BRP < timingBRPMin || t.BRP > timingBRPMax:
		return fmt.Errorf("brp %d is out of range: the MCP2515 divides by 1..64 (CNF1.BRP 0..63)", t.BRP)
	case t.PropSeg < 1 || t.PropSeg > timingSegMax:
		return fmt.Errorf("prop-seg %d TQ is out of range: the MCP2515 allows 1..8", t.PropSeg)
	case t.PhaseSeg1 < 1 || t.PhaseSeg1 > timingSegMax:
		return fmt.Errorf("phase-seg1 %d TQ is out of range: the MCP2515 allows 1..8", t.PhaseSeg1)
	case t.PhaseSeg2 < timingPS2IPT || t.PhaseSeg2 > timingSegMax:
		return fmt.Errorf("phase-seg2 %d TQ is out of range: the MCP2515 allows 2..8 (at least the 2-TQ information processing time)", t.PhaseSeg2)
	case t.SJW < 1 || t.SJW > timingSJWMax:
		return fmt.Errorf("sjw %d TQ is out of range: the MCP2515 allows 1..4", t.SJW)
	case t.PropSeg+t.PhaseSeg1 < t.PhaseSeg2:
		return fmt.Errorf("prop-seg %d + phase-seg1 %d < phase-seg2 %d: the MCP2515 needs PropSeg+PS1 ≥ PS2 (sample point too early)", t.PropSeg, t.PhaseSeg1, t.PhaseSeg2)
	case t.PhaseSeg2 <= t.SJW:
		return fmt.Errorf("phase-seg2 %d ≤ sjw %d: the MCP2515 needs PS2 > SJW; lower sjw", t.PhaseSeg2, t.SJW)
	case t.bitTQ() < timingMinTQ || t.bitTQ() > timingMaxTQ:
		return fmt.Errorf("%d TQ per bit (1+%d+%d+%d) is out of range: the MCP2515 needs 8..25", t.bitTQ(), t.PropSeg, t.PhaseSeg1, t.PhaseSeg2)
	}
	return nil
}

// String prints the timing in the words of `ip -details link show` (sample-point with
// three decimals, tq in ns, the kernel's brp), followed by the register bytes:
//
//	bitrate 500000 sample-point 0.875 tq 125 prop-seg 6 phase-seg1 7 phase-seg2 2 sjw 1 brp 1 cnf1 0x00 cnf2 0xb5 cnf3 0x01
func (t BitTiming) String() string {
	return fmt.Sprintf("bitrate %d sample-point %s tq %d prop-seg %d phase-seg1 %d phase-seg2 %d sjw %d brp %d cnf1 0x%02x cnf2 0x%02x cnf3 0x%02x",
		t.Bitrate, perMille(t.SamplePoint), t.TQ, t.PropSeg, t.PhaseSeg1, t.PhaseSeg2, t.SJW, t.BRP, t.CNF1, t.CNF2, t.CNF3)
}

func (t BitTiming) bitTQ() uint32 { return timingSyncSeg + t.PropSeg + t.PhaseSeg1 + t.PhaseSeg2 }

// derive fills Bitrate, SamplePoint and TQ from the segments.
func (t *BitTiming) derive(oscHz uint32) {
	clock := uint64(oscHz / 2)
	all := uint64(t.bitTQ())
	t.Bitrate = uint32(clock / (uint64(t.BRP) * all))
	t.SamplePoint = uint32(timingPerMille * (all - uint64(t.PhaseSeg2)) / all)
	t.TQ = uint32(uint64(t.BRP) * timingNsPerSec / clock)
}

// pack writes CNF1..CNF3 as the kernel's mcp251x_do_set_bittiming does: BTLMODE set,
// SOF and WAKFIL clear.
func (t *BitTiming) pack() {
	t.CNF1, t.CNF2, t.CNF3 = CNF{
		BRP: uint8(t.BRP - 1), SJW: uint8(t.SJW - 1),
		PRSEG: uint8(t.PropSeg - 1), PHSEG1: uint8(t.PhaseSeg1 - 1), PHSEG2: uint8(t.PhaseSeg2 - 1),
		SAM: t.TripleSampling, BTLMODE: true,
	}.Encode()
}

func checkOsc(oscHz uint32) error {
	if oscHz < timingOscMinHz || oscHz > timingOscMaxHz {
		return fmt.Errorf("oscillator %d Hz is out of range: the MCP2515 runs from 1 MHz to 25 MHz (write e.g. 16000000)", oscHz)
	}
	return nil
}

// suggestCrystal names the first common crystal faster than oscHz that makes bitrate
// exactly with at least 8 TQ per bit.
func suggestCrystal(oscHz, bitrate uint32) string {
	for _, c := range []uint32{8_000_000, 10_000_000, 12_000_000, 16_000_000, 20_000_000, 24_000_000, 25_000_000} {
		if c <= oscHz {
			continue
		}
		t, err := CalcBitTiming(c, bitrate, 0, false)
		if err == nil && t.Error == 0 && t.bitTQ() >= timingMinTQ {
			return "use a " + mhz(c) + " crystal or a lower bitrate"
		}
	}
	return "use another bitrate or crystal"
}

func mhz(hz uint32) string {
	return strconv.FormatFloat(float64(hz)/1e6, 'f', -1, 64) + " MHz"
}

// perMille formats 875 as "0.875".
func perMille(v uint32) string {
	return fmt.Sprintf("%d.%03d", v/timingPerMille, v%timingPerMille)
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}
