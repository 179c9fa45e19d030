package envelope

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"cand/bench"
	"cand/config"
	"cand/sim/canbus"
)

// The frame lengths of the envelope:
//   - dlc0: 0-byte frames of 1024 standard IDs in turn (the ID tells the
//     counter modulo 1024, canbus.Peer.Seq);
//   - dlc8: 8-byte frames of ID 0x123, the counter in the data;
//   - mix: two load peers, one of 1017 standard IDs (0x400...), one of 1017
//     extended IDs (0x18DA0000...), each ID with DLC 0, 1, ..., 8 in turn, each
//     peer's load_percent chosen so the two keep the bus busy the step's load
//     (mixShare); 1017 = 9 · 113 is odd, so the ID's place and a 1..4-byte
//     counter in the data tell the counter together (the Chinese remainder
//     theorem, canbus.Peer.Seq).
const (
	LengthDLC0 = "dlc0"
	LengthDLC8 = "dlc8"
	LengthMix  = "mix"
)

// mixIDs is the number of IDs of each mix peer: a multiple of 9 (DLC 0..8 in
// turn), odd (coprime with a data counter's power-of-two modulus).
const mixIDs = 9 * 113

// workload is length's workload at load percent, the mix's peers at
// share percent each (mixShare).
func workload(length string, load int, share float64) (*bench.Workload, error) {
	peer := func(name string, ids []uint32, pct float64) bench.Peer {
		return bench.Peer{SimPeer: config.SimPeer{Kind: config.PeerLoad, Name: name, IDs: ids, LoadPercent: pct}}
	}
	var peers []bench.Peer
	switch length {
	case LengthDLC0, LengthDLC8:
		p := peer("load", []uint32{0x123}, float64(load))
		p.DLC = new(uint8(8))
		if length == LengthDLC0 {
			p.IDs, p.DLC = bench.IDRange(0x200, 1024), new(uint8(0))
		}
		peers = []bench.Peer{p}
	case LengthMix:
		dlcs := make([]uint8, mixIDs)
		for i := range dlcs {
			dlcs[i] = uint8(i % 9)
		}
		std := peer("std", bench.IDRange(0x400, mixIDs), share)
		ext := peer("ext", bench.IDRange(0x18DA0000, mixIDs), share)
		std.DLCs, ext.DLCs, ext.Extended = dlcs, dlcs, true
		peers = []bench.Peer{std, ext}
	default:
		return nil, fmt.Errorf("bench: envelope frame length %q: use %s", length, strings.Join(DefaultLengths, ", "))
	}
	return &bench.Workload{Kind: length, Buses: []bench.BusLoad{{Peers: peers}}}, nil
}

// mixBits is how long the bus model runs to measure the mix's busy time: some
// 20,000 frames.
const mixBits = 2_000_000

// mixShare is the load_percent of each of the mix's two peers at which they
// keep the bus busy load percent of the time (within 0.1 %), by the bus model
// alone (sim/canbus, no daemon: the peers acknowledge each other). Two peers of
// p % keep it busy less than 2p %: each waits after its own frame, and one's
// frame may come due while the other's is on the wire. 100 % takes about 80 %
// each (the two then send in turn); at 100 % each the lower IDs would win every
// arbitration and starve the other peer.
func mixShare(bitrate uint32, load int) (float64, error) {
	// busy grows with p: from below load at load/2 to at least load at
	// min(load, 90).
	lo, hi := float64(load)/2, min(float64(load), 90)
	for range 14 { // 45/2^14: a share within 0.003 %
		mid := (lo + hi) / 2
		got, err := mixBusy(bitrate, mid)
		if err != nil {
			return 0, err
		}
		if got >= float64(load)-0.1 {
			hi = mid
		} else {
			lo = mid
		}
	}
	return math.Round(hi*1000) / 1000, nil
}

// mixBusy is the percentage of time the mix's peers at p % each keep the bus
// busy, by the bus model over mixBits bit times.
func mixBusy(bitrate uint32, p float64) (float64, error) {
	wl, err := workload(LengthMix, 0, p)
	if err != nil {
		return 0, err
	}
	b := canbus.New(bitrate)
	var peers []*canbus.Peer
	for _, q := range wl.Buses[0].Peers {
		pr, err := canbus.NewPeer(b, canbus.PeerSpec{Kind: canbus.PeerLoad, Name: q.Name, IDs: q.IDs,
			Extended: q.Extended, DLCs: q.DLCs, LoadPercent: q.LoadPercent})
		if err != nil {
			return 0, err
		}
		peers = append(peers, pr)
	}
	for _, pr := range peers {
		pr.Start(0)
	}
	end := b.Bits(mixBits)
	b.Lock()
	b.AdvanceTo(end)
	b.Unlock()
	return 100 * float64(b.Stats().BusyNs) / float64(end), nil
}

// PiStep runs one step on the virtual Pi: the daemon with cfg's settings (base)
// and poll window, the board profile and the strict rule, watched by the
// observer observe makes (nil: none; the post-mortem, package bench/postmortem).
func PiStep(base *bench.Base, set Settings, observe func(*bench.Watched) bench.Observer) CellRunner {
	return func(ctx context.Context, board config.SimBoard, bitrate uint32, length string, load int) (Step, error) {
		var share float64
		if length == LengthMix {
			var err error
			if share, err = mixShare(bitrate, load); err != nil {
				return Step{}, err
			}
		}
		wl, err := workload(length, load, share)
		if err != nil {
			return Step{}, err
		}
		sc := bench.Scenario{Name: fmt.Sprintf("envelope-%s-%s-%s-%d", board, bench.Rate(bitrate), length, load), Bitrate: bitrate,
			DLC: 8, IntPollWindow: time.Duration(set.IntPollWindowUs * 1e3), Board: board, Rule: set.ClockRule,
			Duration: time.Duration(set.StepS * float64(time.Second)), Workload: wl, StopAtFirstLoss: set.StopAtFirstLoss,
			Observe: observe}
		res, err := bench.RunScenario(ctx, sc, base)
		if ctx.Err() != nil {
			return Step{}, ctx.Err()
		}
		s := Step{DurationS: res.DurationS, BoardAheadS: res.Clock.AheadMs / 1e3, Offered: res.FramesOffered,
			Received: res.FramesReceived, Lost: res.FramesLost, Overflows: res.RXOverflows, SeqGaps: res.SeqGaps,
			Reordered: res.Reordered, Duplicates: res.Duplicates}
		s.StoppedAtFirstLoss = set.StopAtFirstLoss && res.DurationS < 0.999*set.StepS
		s.MixPeerLoadPercent = share
		s.Clock = &res.Clock
		s.FirstLoss = res.FirstLoss
		if err != nil {
			s.Error = err.Error()
		} else if res.ClockRule != string(set.ClockRule) || res.Board != string(board) {
			return s, fmt.Errorf("bench: envelope step %s ran on %s under %s, want %s under %s", sc.Name, res.Board, res.ClockRule, board, set.ClockRule)
		}
		return s, nil
	}
}

// Options configure Run.
type Options struct {
	// Boards, Bitrates and Lengths are the cells (nil: DefaultBoards,
	// DefaultBitrates, DefaultLengths).
	Boards   []config.SimBoard
	Bitrates []uint32
	Lengths  []string
	// Step is each step's measured window (0: StepDefault).
	Step time.Duration
	// Config is cfg's path, for the record; Commit cand's version.
	Config string
	Commit string
	// FullSteps runs every step for its whole window, also after a loss (the
	// loss over the step, at up to twice the time).
	FullSteps bool
	// Out is the JSON document's path; Fresh starts over even if it holds
	// cells of the same settings.
	Out   string
	Fresh bool
	// PostMortem, when set, records each failing step's first loss
	// (Step.FirstLoss).
	PostMortem PostMortem
}

// PostMortem explains a step's first lost frame: package bench/postmortem.
type PostMortem interface {
	// Observe makes the observer of one step; its End sets the result's
	// FirstLoss.
	Observe(w *bench.Watched) bench.Observer
	// Summary is a FirstLoss as one line of progress.
	Summary(firstLoss json.RawMessage) string
}

// FileName is the JSON document's file name in cand bench's -out directory.
const FileName = "envelope.json"

// Run runs the envelope on the virtual Pi with cfg's hardware, realtime
// and SPI settings and its first controller's int_poll_window, under the strict
// rule, resuming o.Out if it holds cells of the same settings. It returns the
// document so far, also on an error (e.g. interrupted).
func Run(ctx context.Context, cfg *config.Config, o Options, progress io.Writer) (*File, error) {
	if len(cfg.Controllers) == 0 {
		return nil, fmt.Errorf("bench: %s has no controller: the envelope takes the first one's SPI settings and int_poll_window", o.Config)
	}
	set := Settings{Boards: o.Boards, Bitrates: o.Bitrates, Lengths: o.Lengths, StepS: o.Step.Seconds(),
		ClockRule: config.SimCPUStrict, IntPollWindowUs: float64(cfg.Controllers[0].IntPollWindow.D()) / 1e3,
		Config: o.Config, SPIClockHz: cfg.Controllers[0].SPI.ClockHz, Commit: o.Commit, StopAtFirstLoss: !o.FullSteps,
		PostMortem: o.PostMortem != nil}
	if set.Boards == nil {
		set.Boards = DefaultBoards
	}
	if set.Bitrates == nil {
		set.Bitrates = DefaultBitrates
	}
	if set.Lengths == nil {
		set.Lengths = DefaultLengths
	}
	if o.Step == 0 {
		set.StepS = StepDefault.Seconds()
	}
	for _, l := range set.Lengths {
		if _, err := workload(l, 100, 80); err != nil {
			return nil, err
		}
	}
	f, err := open(o.Out, set, o.Fresh)
	if err != nil {
		return nil, err
	}
	base := bench.BaseOf(cfg)
	fmt.Fprintf(progress, "envelope: %s, int_poll_window %s, %s rule, boards %v, commit %s; results in %s\n",
		o.Config, pollWindowUs(set.IntPollWindowUs), set.ClockRule, set.Boards, set.Commit, o.Out)
	r := &search{set: set, path: o.Out, run: PiStep(&base, set, observer(o.PostMortem)), summary: summary(o.PostMortem), loadAvg: hostLoadAvg, now: time.Now, progress: progress}
	if err := f.write(o.Out); err != nil {
		return f, err
	}
	return f, r.runCells(ctx, f)
}

// hostLoadAvg is the host's 1-minute load average (/proc/loadavg), -1 if it
// cannot be read.
func hostLoadAvg() float64 {
	b, err := os.ReadFile(filepath.Join("/proc", "loadavg"))
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// observer is pm's Observe (nil: no post-mortem).
func observer(pm PostMortem) func(*bench.Watched) bench.Observer {
	if pm == nil {
		return nil
	}
	return pm.Observe
}

// summary is pm's Summary (nil: no post-mortem).
func summary(pm PostMortem) func(json.RawMessage) string {
	if pm == nil {
		return nil
	}
	return pm.Summary
}
