package config

import (
	"errors"
	"strings"

	"cand/mcp2515"
)

// Bitrate limits cand accepts (CAN high-speed range the MCP2515 supports).
const (
	MinBitrate = 10_000
	MaxBitrate = 1_000_000
)

// BitTiming returns the controller's bit timing: the explicit Timing if given, else
// the Linux kernel's choice for OscillatorHz, Bitrate and SamplePoint
// (mcp2515.CalcBitTiming), so CNF1..CNF3 match the mcp251x driver's. On a Config
// returned by Load or Parse it does not fail.
func (c *Controller) BitTiming() (mcp2515.BitTiming, error) {
	t := c.Timing
	if t == nil {
		return mcp2515.CalcBitTiming(c.OscillatorHz, c.Bitrate, perMilleOf(c.SamplePoint), c.TripleSampling)
	}
	if t.CNF1 != nil || t.CNF2 != nil || t.CNF3 != nil {
		if t.CNF1 == nil || t.CNF2 == nil || t.CNF3 == nil {
			return mcp2515.BitTiming{}, errors.New("timing needs all three of cnf1, cnf2, cnf3")
		}
		return mcp2515.TimingFromCNF(c.OscillatorHz, *t.CNF1, *t.CNF2, *t.CNF3)
	}
	bt, err := mcp2515.TimingFromSegments(c.OscillatorHz, t.BRP, t.PropSeg, t.PhaseSeg1, t.PhaseSeg2, t.SJW)
	if err != nil {
		return bt, err
	}
	bt.TripleSampling = c.TripleSampling
	bt.Pack()
	return bt, nil
}

var (
	cnfKeys     = []string{"cnf1", "cnf2", "cnf3"}
	segmentKeys = []string{"brp", "prop_seg", "phase_seg1", "phase_seg2"} // sjw is optional
)

// bitTiming checks bitrate, sample_point and timing, and that the MCP2515 can make
// the bitrate; oscOK says the oscillator is usable for the calculation.
func (v checker) bitTiming(ct *Controller, p string, oscOK bool) {
	rate := p + ".bitrate"
	rateOK := !v.bad[rate]
	if v.has(rate) && (ct.Bitrate < MinBitrate || ct.Bitrate > MaxBitrate) {
		v.fail(rate, "%d is not allowed: bitrate must be %d..%d bit/s", ct.Bitrate, MinBitrate, MaxBitrate)
		rateOK = false
	}
	spPath := p + ".sample_point"
	spOK := !v.bad[spPath]
	if sp := ct.SamplePoint; sp != 0 && (sp < 0 || sp >= 1 || perMilleOf(sp) == 0 || perMilleOf(sp) >= 1000) {
		v.fail(spPath, "%s is not allowed: sample_point is the fraction of the bit where the bus is sampled, between 0 and 1 (e.g. 0.875), or 0 for the kernel's default", fmtFloat(sp))
		spOK = false
	}

	if ct.Timing == nil {
		if !v.has(rate) {
			v.fail(rate, "missing: give the bus's bitrate, %d..%d bit/s, e.g. bitrate: 500000", MinBitrate, MaxBitrate)
			return
		}
		if !oscOK || !rateOK || !spOK {
			return
		}
		bt, err := ct.BitTiming()
		if err != nil {
			v.fail(rate, "%v", err)
			return
		}
		if err := bt.Check(); err != nil {
			v.warn(rate, "the kernel's timing for this (%s) breaks a datasheet rule: %v; cand programs it as the kernel would, or give timing explicitly", bt, err)
		}
		return
	}

	tp := p + ".timing"
	if v.has(spPath) && ct.SamplePoint != 0 {
		v.fail(spPath, "has no effect with timing; remove one of them")
	}
	present := func(keys []string) (have, missing []string) {
		for _, k := range keys {
			if v.has(tp + "." + k) {
				have = append(have, k)
			} else {
				missing = append(missing, k)
			}
		}
		return have, missing
	}
	cnfHave, cnfMissing := present(cnfKeys)
	segHave, segMissing := present(segmentKeys)
	if v.has(tp + ".sjw") {
		segHave = append(segHave, "sjw")
	}
	switch {
	case len(cnfHave) > 0 && len(segHave) > 0:
		v.fail(tp, "give either cnf1, cnf2, cnf3 or brp, prop_seg, phase_seg1, phase_seg2 (and sjw), not both")
		return
	case len(cnfHave) > 0 && len(cnfMissing) > 0:
		v.fail(tp, "%s missing: give all three of cnf1, cnf2, cnf3", strings.Join(cnfMissing, ", "))
		return
	case len(segHave) > 0 && len(segMissing) > 0:
		v.fail(tp, "%s missing: give brp, prop_seg, phase_seg1, phase_seg2 (sjw defaults to 1)", strings.Join(segMissing, ", "))
		return
	case len(cnfHave) == 0 && len(segHave) == 0:
		v.fail(tp, "empty: give cnf1, cnf2, cnf3, or brp, prop_seg, phase_seg1, phase_seg2 (and sjw)")
		return
	}
	if !oscOK {
		return
	}
	for _, k := range append(cnfKeys, append(segmentKeys, "sjw")...) {
		if v.bad[tp+"."+k] {
			return
		}
	}
	bt, err := ct.BitTiming()
	if err != nil {
		v.fail(tp, "%v", err)
		return
	}
	if len(cnfHave) > 0 && ct.TripleSampling && !bt.TripleSampling {
		v.fail(p+".triple_sampling", "true, but timing.cnf2 0x%02x lacks SAM (0x40); set it there or remove triple_sampling", bt.CNF2)
	}
	if !v.has(rate) {
		ct.Bitrate = bt.Bitrate
		return
	}
	if !rateOK {
		return
	}
	if off := uint64(absDiff(ct.Bitrate, bt.Bitrate)) * 1000 / uint64(ct.Bitrate); off > 50 {
		v.fail(rate, "%d bit/s, but timing makes %d bit/s (%d.%d %% off, limit 5 %%); fix one of them or remove bitrate", ct.Bitrate, bt.Bitrate, off/10, off%10)
	}
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}
