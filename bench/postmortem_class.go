package bench

import (
	"fmt"
	"sort"
	"strings"

	"cand/canwire"
	"cand/sim/clock"
)

// FirstLoss is the post-mortem of a step's first lost frame (Scenario.PostMortem,
// `cand bench -envelope -postmortem`; docs/BENCHMARKS.md, "Why single frames are
// lost"). Times are the board's (the virtual Pi's clock) unless named host.
type FirstLoss struct {
	// Trigger is what the reader saw first: rx_overflow (the driver counted
	// one) or sequence_gap.
	Trigger string `json:"trigger"`
	// LostFrameKnown: the missing frame (the first gap's counter) was found
	// among the frames the bus completed; LostAtMs is its end of frame after the
	// window's start. Unknown, the stretch ends at the capture.
	LostFrameKnown bool    `json:"lost_frame_known"`
	LostAtMs       float64 `json:"lost_at_ms"`
	// CaptureAfterUs is how long after the loss the reader copied the trace.
	CaptureAfterUs float64 `json:"capture_after_us"`
	// FrameUs is the lost frame's wire time; StretchUs the stretch analysed:
	// from the end of the second frame before the lost one (the first of the
	// two that filled RXB0 and RXB1) to the lost frame's end.
	FrameUs   float64 `json:"frame_us"`
	StretchUs float64 `json:"stretch_us"`
	// The board's CPU at the capture: the governor's ARM clock (AtMinClock: its
	// idle minimum) and the CPU factor in force (board ns per host ns of the
	// owner's own running).
	ARMMHz     float64 `json:"arm_mhz"`
	AtMinClock bool    `json:"arm_at_min_clock"`
	CPUFactor  float64 `json:"cpu_factor"`
	// GC is the garbage collector's activity in the window; GCPauseInStretch
	// says one of its stop-the-world pauses overlapped the stretch's host span.
	GC               GCActivity `json:"gc"`
	GCPauseInStretch bool       `json:"gc_pause_in_stretch"`
	// OwnerState is what the owner thread did when the lost frame completed.
	OwnerState string `json:"owner_state"`
	// IntLowAtStretch: the INT line was already low when the stretch's first
	// frame began (a flag set and not served), so taking it made no falling
	// edge to wake an owner asleep in epoll_wait.
	IntLowAtStretch bool `json:"int_low_at_stretch_start"`
	// Frames are the stretch's three frames (the two before the lost one and
	// it): their end from the loss, the host µs since the first was delivered,
	// by which thread, and whether INT was low at their start.
	Frames []PMFrame `json:"frames"`
	// EdgesDropped is how many INT edge events the line dropped in the window
	// to a full event buffer (an edge the owner never got).
	EdgesDropped uint64 `json:"int_edges_dropped"`
	// ChargedUs is the stretch's board time by category (pmCategories).
	ChargedUs map[string]float64 `json:"charged_us"`
	// Largest is the longest single segment of the stretch (it may begin
	// before it; its whole length is given).
	Largest PMSegment `json:"largest"`
	// RunDelayUs and StealUs are host time the clock removed in the looked-at
	// gaps that overlap the stretch: the host's own stalls of the owner thread
	// (other engineers' tests), taken out, not charged.
	RunDelayUs float64 `json:"run_delay_removed_us"`
	StealUs    float64 `json:"steal_removed_us"`
	// Class is the largest charged category of the stretch, named as
	// docs/BENCHMARKS.md classifies it (pmClass).
	Class string `json:"class"`
	// Trace is the looked-at gaps from three frame times before the loss to
	// the first one after it.
	Trace []PMTraceRow `json:"trace"`
}

// PMSegment is a stretch of the board's time with one category, in µs from the
// loss (negative: before it).
type PMSegment struct {
	Category string  `json:"category"`
	Kind     string  `json:"kind"` // the trace's kind of its gap ("short": between looks)
	FromUs   float64 `json:"from_us"`
	ToUs     float64 `json:"to_us"`
}

// PMFrame is one frame of the stretch.
type PMFrame struct {
	EndUs float64 `json:"end_us"`
	// HostUs is the host time it was delivered at, from the capture.
	HostUs float64 `json:"host_us"`
	// By is the delivering thread: owner, bus (the thread that delivered most
	// of the ring's frames other than the owner) or another thread's ID.
	By string `json:"delivered_by"`
	// LateUs is how far the board's clock was past the frame's end then.
	LateUs     float64 `json:"late_us"`
	IntLowAtSF bool    `json:"int_low_at_start"`
}

// PMTraceRow is one looked-at gap (sim/clock GapRecord) in µs; EndUs is the
// board time of the access that ended it, from the loss.
type PMTraceRow struct {
	EndUs float64 `json:"end_us"`
	// HostUs is the host time of the access that ended it, from the loss's
	// capture (negative: before).
	HostUs      float64 `json:"host_us"`
	Kind        string  `json:"kind"`
	SpanUs      float64 `json:"board_span_us"`
	BoardUs     float64 `json:"board_us"`
	GapUs       float64 `json:"host_gap_us"`
	OnUs        float64 `json:"on_cpu_us"`
	RunDelayUs  float64 `json:"run_delay_us"`
	RestUs      float64 `json:"rest_us"`
	FreeUs      float64 `json:"free_us"`
	ShortUs     float64 `json:"short_us"`
	ModelUs     float64 `json:"model_us"`
	UnmatchedUs float64 `json:"unmatched_us"`
	RemovedUs   float64 `json:"removed_us"`
	KeptUs      float64 `json:"kept_us"`
}

// The categories of the board's time.
const (
	catOwn       = "own_running"    // cand's code at the factor: short gaps, looked-at running, register accesses
	catWait      = "waiting"        // asleep for an INT edge or the hardware: the board idle
	catWake      = "wake_up"        // the board's wake-up from epoll_wait (WakeHostNs × factor)
	catPark      = "park"           // a Go runtime park's board cost (ParkHostNs × factor)
	catKept      = "floor_kept"     // host time the floors refused to remove
	catUnmatched = "leaked_running" // short gaps' host time that was no running, charged at the factor
	catAccess    = "access_kept"    // a long register access's host time the floors kept
	catCalib     = "calibration"    // a calibration burst's kept host time
)

// pmCategories lists them in table order.
var pmCategories = []string{catOwn, catWait, catWake, catPark, catKept, catUnmatched, catAccess, catCalib}

// The classes of a first loss (docs/BENCHMARKS.md, "Why single frames are lost").
const (
	ClassOwn       = "i_own_running"
	ClassPark      = "ii_runtime_park"
	ClassWake      = "iii_wake_up"
	ClassGC        = "iv_gc"
	ClassIdleClock = "v_own_running_idle_clock"
	ClassHostLeak  = "vi_host_leak"
	ClassOther     = "vii_other"
)

// segment is board time [from, to) of one category.
type segment struct {
	from, to int64
	cat      string
	kind     byte // 0: short gaps between looks
	rec      int  // index in the trace, -1 between looks
}

// recordSpan is the board time a looked-at gap took: its charge, or its host
// time less what was removed where that is more (the floors kept some).
func recordSpan(r clock.GapRecord) int64 {
	if r.Kind == 'a' || r.Kind == 'c' {
		return max(r.Gap-r.Removed, 0)
	}
	return max(r.Board, r.Gap-r.Removed)
}

// segments splits the board's time the trace covers: per record the time between
// the previous look and its gap (short gaps and accesses: cand's running, less
// the unmatched host time charged as running), then its gap by what the clock
// charged for it. f is the factor (FactorUnit), cpu the costs.
func segments(tr []clock.GapRecord, cpu clock.CPU) []segment {
	f := cpu.Factor
	sc := func(ns int64) int64 { return ns * f / clock.FactorUnit }
	var out []segment
	add := func(from, to int64, cat string, kind byte, rec int) int64 {
		if to > from {
			out = append(out, segment{from, to, cat, kind, rec})
		}
		return max(to, from)
	}
	prev := int64(0)
	for i, r := range tr {
		span := recordSpan(r)
		start := r.Virt - span
		if i > 0 && start > prev {
			leak := min(sc(r.Unmatched), start-prev)
			add(prev, start-leak, catOwn, 0, -1)
			add(start-leak, start, catUnmatched, 0, -1)
		}
		t := start
		body := min(r.Board, span)
		switch r.Kind {
		case 'w':
			// The wait first: while it lasts the bus thread moves the
			// board's time one to one with the host's; the look charges the
			// wake-up and the gap's running at the factor where it ends,
			// after the edge, whichever side of the sleep the running was.
			wake := min(sc(cpu.WakeHostNs), max(body-r.Free, 0))
			own := max(body-r.Free-wake, 0)
			t = add(t, t+r.Free, catWait, r.Kind, i)
			t = add(t, t+wake, catWake, r.Kind, i)
			t = add(t, t+own, catOwn, r.Kind, i)
		case 'h':
			own := max(body-r.Free, 0)
			t = add(t, t+r.Free, catWait, r.Kind, i)
			t = add(t, t+own, catOwn, r.Kind, i)
		case 'p':
			// A park's running is the runtime's preemption and scheduling
			// (sim/clock strict.go): the park's, whichever part was charged.
			t = add(t, t+body, catPark, r.Kind, i)
		case 'a':
			own := min(cpu.AccessNs, span)
			t = add(t, t+own, catOwn, r.Kind, i)
			t = add(t, r.Virt, catAccess, r.Kind, i)
		case 'c':
			t = add(t, r.Virt, catCalib, r.Kind, i)
		default: // 's'
			t = add(t, t+body, catOwn, r.Kind, i)
		}
		add(t, r.Virt, catKept, r.Kind, i)
		prev = max(prev, r.Virt)
	}
	return out
}

// lostFrame finds the board time of the first missing frame of the streams (the
// earliest if several miss one) among the bus's frames.
func lostFrame(frames []tapFrame, streams []*stream) (at int64, idx int, ok bool) {
	idx = -1
	for _, s := range streams {
		if s.filtered {
			continue
		}
		// The first gap's counter; without one, the frame expected next if the
		// window's last frames never arrived (lost at its very end: no gap).
		want := s.FirstGap
		if s.Gaps == 0 {
			if s.Next >= s.End {
				continue
			}
			want = s.Next
		}
		for i := len(frames) - 1; i >= 0; i-- {
			fr := frames[i]
			if fr.Nth != want || !s.sends(fr.F.ID, fr.F.IsExtended) {
				continue
			}
			if c, mod, k := s.seq(fr.F); !k || (mod != 0 && c != want%mod) || (mod == 0 && c != want) {
				continue
			}
			if !ok || fr.At < at {
				at, idx, ok = fr.At, i, true
			}
			break
		}
	}
	return at, idx, ok
}

// analyse turns the capture into the step's FirstLoss; streams tell the missing
// frame, bitrate its wire time.
func (pm *postMortem) analyse(streams []*stream, bitrate uint32) *FirstLoss {
	if !pm.captured {
		return nil
	}
	fl := &FirstLoss{Trigger: pm.trigger, ARMMHz: float64(pm.armHz) / 1e6, AtMinClock: pm.armHz == pm.armMinHz && pm.armMinHz != pm.armMaxHz,
		CPUFactor: float64(pm.cpu.Factor) / clock.FactorUnit, GC: pm.gcAct, ChargedUs: map[string]float64{},
		EdgesDropped: pm.dropped - pm.dropped0}
	bitNs := int64(1e9) / int64(bitrate)
	loss, k, ok := lostFrame(pm.frames, streams)
	frameNs := int64(0)
	start := int64(0)
	if ok {
		f := pm.frames[k].F
		frameNs = int64(canwire.Bits(&f)) * bitNs
		start = loss - 2*frameNs
		if k >= 2 {
			start = pm.frames[k-2].At
		}
		fl.IntLowAtStretch = pm.frames[max(k-2, 0)].IntLowAtStart
		byTid := map[int]int{}
		bus, most := 0, 0
		for _, fr := range pm.frames {
			if fr.Tid != pm.ownerTid {
				byTid[fr.Tid]++
				if byTid[fr.Tid] > most {
					bus, most = fr.Tid, byTid[fr.Tid]
				}
			}
		}
		for _, fr := range pm.frames[max(k-2, 0) : k+1] {
			by := fmt.Sprint(fr.Tid)
			switch fr.Tid {
			case pm.ownerTid:
				by = "owner"
			case bus:
				by = "bus"
			}
			fl.Frames = append(fl.Frames, PMFrame{EndUs: float64(fr.At-loss) / 1e3, HostUs: float64(fr.Host-pm.host) / 1e3,
				By: by, LateUs: float64(fr.Late) / 1e3, IntLowAtSF: fr.IntLowAtStart})
		}
	} else {
		loss = pm.board
		frameNs = 111 * bitNs // an 8-byte standard frame without stuff bits, for the window only
		start = loss - 2*frameNs
	}
	fl.LostFrameKnown = ok
	fl.LostAtMs = float64(loss-pm.boardStart) / 1e6
	fl.CaptureAfterUs = float64(pm.board-loss) / 1e3
	fl.FrameUs = float64(frameNs) / 1e3
	fl.StretchUs = float64(loss-start) / 1e3
	rel := func(v int64) float64 { return float64(v-loss) / 1e3 }

	segs := segments(pm.trace, pm.cpu)
	var largest *segment
	for i := range segs {
		s := &segs[i]
		a, b := max(s.from, start), min(s.to, loss)
		if b <= a {
			continue
		}
		fl.ChargedUs[s.cat] += float64(b-a) / 1e3
		if s.cat != catWait && (largest == nil || s.to-s.from > largest.to-largest.from) {
			largest = s
		}
	}
	if largest != nil {
		fl.Largest = PMSegment{Category: largest.cat, Kind: kindName(largest.kind), FromUs: rel(largest.from), ToUs: rel(largest.to)}
	}
	fl.OwnerState = ownerState(segs, pm.trace, loss)

	// The looked-at gaps overlapping the stretch: what the host did meanwhile.
	hostFrom, hostTo := int64(-1), int64(0)
	for i, r := range pm.trace {
		from := r.Virt - recordSpan(r)
		if r.Virt >= loss-3*frameNs && (i == 0 || pm.trace[i-1].Virt <= loss) {
			row := traceRow(r, loss)
			row.HostUs = float64(r.At-pm.host) / 1e3
			fl.Trace = append(fl.Trace, row)
		}
		if r.Virt < start || from > loss {
			continue
		}
		fl.RunDelayUs += float64(r.RunQ) / 1e3
		if r.Kind == 's' {
			fl.StealUs += float64(r.Rest) / 1e3
		}
		if hostFrom < 0 {
			hostFrom = r.At - r.Gap
		}
		hostTo = r.At
	}
	if hostFrom >= 0 {
		for _, p := range memPauses() {
			if p[1] >= hostFrom && p[0] <= hostTo {
				fl.GCPauseInStretch = true
			}
		}
		for _, g := range pm.gcRing {
			if g.Host >= hostFrom-pmGCNear && g.Host <= hostTo+pmGCNear {
				fl.GC.CycleNearLoss = true
			}
		}
	}
	fl.Class = pmClass(fl)
	return fl
}

// pmBusLateUs is how late (µs) past a frame the bus thread may deliver it before
// the post-mortem counts the lateness as host time left in the board's: the
// clock's BusLateGrace.
const pmBusLateUs = float64(clock.BusLateGrace) / 1e3

// pmClass is the class of the stretch's largest charged category.
func pmClass(fl *FirstLoss) string {
	best, bestUs := "", 0.0
	for _, c := range pmCategories {
		if c == catWait {
			continue // the board idle: no charge
		}
		if v := fl.ChargedUs[c]; v > bestUs {
			best, bestUs = c, v
		}
	}
	gc := fl.GCPauseInStretch || fl.GC.CycleNearLoss
	switch best {
	case catOwn:
		if fl.AtMinClock {
			return ClassIdleClock
		}
		return ClassOwn
	case catPark:
		if gc {
			return ClassGC
		}
		return ClassPark
	case catWake:
		return ClassWake
	case catKept, catUnmatched:
		return ClassHostLeak
	case "":
		if len(fl.Frames) > 0 && fl.Frames[0].By == "bus" && fl.Frames[0].LateUs > pmBusLateUs {
			// Asleep throughout by the account, but the bus thread delivered
			// the stretch's first frame with the board's clock already far
			// past it: its lateness stayed in the board's time.
			return ClassHostLeak
		}
		return ClassOther + ":" + catWait
	}
	return ClassOther + ":" + best
}

// ownerState names what the owner did at board time at.
func ownerState(segs []segment, tr []clock.GapRecord, at int64) string {
	if len(tr) > 0 && at >= tr[len(tr)-1].Virt {
		return "running: short gaps since the last looked-at gap"
	}
	for _, s := range segs {
		if at < s.from || at >= s.to {
			continue
		}
		switch {
		case s.cat == catWait && s.kind == 'w':
			return "asleep in epoll_wait"
		case s.cat == catWait:
			return "waiting for the hardware"
		case s.cat == catWake:
			return "waking from epoll_wait"
		case s.cat == catPark:
			return "parked by the Go runtime"
		case s.cat == catOwn && s.kind == 0:
			return "running: short gaps (a loop turn, an interrupt, the poll window)"
		case s.cat == catOwn:
			return "running: a looked-at gap (" + kindName(s.kind) + ")"
		}
		return s.cat
	}
	return "unknown (before the trace)"
}

func kindName(k byte) string {
	if k == 0 {
		return "short"
	}
	return string(k)
}

func traceRow(r clock.GapRecord, loss int64) PMTraceRow {
	u := func(ns int64) float64 { return float64(ns) / 1e3 }
	return PMTraceRow{EndUs: u(r.Virt - loss), Kind: kindName(r.Kind), SpanUs: u(recordSpan(r)), BoardUs: u(r.Board), GapUs: u(r.Gap),
		OnUs: u(r.On), RunDelayUs: u(r.RunQ), RestUs: u(r.Rest), FreeUs: u(r.Free), ShortUs: u(r.Short), ModelUs: u(r.Model),
		UnmatchedUs: u(r.Unmatched), RemovedUs: u(r.Removed), KeptUs: u(r.Kept)}
}

// Text is a one-line summary of the post-mortem.
func (fl *FirstLoss) Text() string {
	var parts []string
	for _, c := range pmCategories {
		if v := fl.ChargedUs[c]; v >= 0.05 {
			parts = append(parts, fmt.Sprintf("%s %.1f", c, v))
		}
	}
	sort.Strings(parts)
	known := ""
	if !fl.LostFrameKnown {
		known = " (lost frame not found: stretch ends at the capture)"
	}
	intLow := ""
	if fl.IntLowAtStretch {
		intLow = " (INT already low at the stretch's start)"
	}
	return fmt.Sprintf("first loss (%s) at %.1f ms%s: %s; stretch %.0f µs [%s]; largest %s/%s %.0f µs; owner %s%s; ARM %.0f MHz factor %.1f; GC %d cycles (near %v, pause in stretch %v); run delay %.0f µs, steal %.0f µs removed",
		fl.Trigger, fl.LostAtMs, known, fl.Class, fl.StretchUs, strings.Join(parts, ", "), fl.Largest.Category, fl.Largest.Kind,
		fl.Largest.ToUs-fl.Largest.FromUs, fl.OwnerState, intLow, fl.ARMMHz, fl.CPUFactor, fl.GC.Cycles, fl.GC.CycleNearLoss, fl.GCPauseInStretch,
		fl.RunDelayUs, fl.StealUs)
}
