// Package envelope finds cand's envelope: for each board profile, bitrate and
// frame length, the highest bus load on a 5 % grid at which cand loses no frame
// over one step (20 s by default) on the virtual Pi under the strict clock
// rule (`cand bench -envelope`; docs/BENCHMARKS.md, "Envelope"). Each step is a
// bench.Scenario.
//
// Files: envelope.go (the grid, the search, the run over the cells), step.go
// (one step on the virtual Pi), cells.go (the cells asked for), file.go (the
// JSON, resuming), markdown.go (the table).
package envelope

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"cand/bench"
	"cand/config"
)

// GridPercent is the grid of the search: loads 5, 10, ..., 100 %.
const GridPercent = 5

// MaxSteps is the most steps one cell takes: 100 %, then a bisection
// of the 20 grid points below it and "none" (ceil(log2 20) = 5).
var MaxSteps = 1 + int(math.Ceil(math.Log2(100/GridPercent)))

// Default cells of the envelope.
var (
	DefaultBoards   = []config.SimBoard{config.SimBoardPiZero, config.SimBoardPi3, config.SimBoardPi4}
	DefaultBitrates = []uint32{125_000, 250_000, 500_000, 1_000_000}
	DefaultLengths  = []string{LengthDLC0, LengthDLC8, LengthMix}
)

// StepDefault is a step's measured window.
const StepDefault = 20 * time.Second

// stepOverhead is about what a step takes beyond its window on the
// build machine: the virtual Pi's and the daemon's start and stop (some 30 ms)
// and the drain (up to 0.5 s when frames are missing, bench.RunScenario). For the estimate
// printed at the start only.
const stepOverhead = time.Second

// Settings are what a cell's result depends on: a rerun with the same
// settings resumes, skipping the cells done.
type Settings struct {
	Boards   []config.SimBoard `json:"boards"`
	Bitrates []uint32          `json:"bitrates"`
	Lengths  []string          `json:"lengths"`
	StepS    float64           `json:"step_s"`
	// StopAtFirstLoss ends a step at its first RX overflow or sequence gap: the
	// step has failed, and the search needs no more of it (Scenario.StopAtFirstLoss).
	StopAtFirstLoss bool `json:"stop_at_first_loss"`
	// PostMortem: each failing step records what the owner thread and the
	// board's clock did before its first loss (Step.FirstLoss).
	PostMortem bool `json:"postmortem,omitempty"`
	// ClockRule is hardware.sim_cpu of every step (strict).
	ClockRule config.SimCPU `json:"clock_rule"`
	// IntPollWindowUs is the controllers' int_poll_window, the configuration's
	// (0: off).
	IntPollWindowUs float64 `json:"int_poll_window_us"`
	// Config is the configuration file the hardware, realtime and SPI settings
	// came from; SPIClockHz its first controller's SPI clock.
	Config     string `json:"config"`
	SPIClockHz uint32 `json:"spi_clock_hz"`
	// Commit is cand's version (git describe, as `cand -version` prints it).
	Commit string `json:"commit"`
}

// Step is one run at one load.
type Step struct {
	LoadPercent int  `json:"load_percent"`
	Lossless    bool `json:"lossless"`
	// DurationS is the measured window in host time; StoppedAtFirstLoss says it
	// ended early at the first loss; BoardAheadS is how far the virtual Pi's
	// time ran ahead of the host's over the run (strict rule: cand's own time
	// charged at the board's speed, less the host's stalls taken out).
	DurationS          float64 `json:"duration_s"`
	StoppedAtFirstLoss bool    `json:"stopped_at_first_loss,omitempty"`
	BoardAheadS        float64 `json:"board_ahead_of_host_s"`
	// MixPeerLoadPercent is each mix peer's load_percent (mixShare).
	MixPeerLoadPercent float64 `json:"mix_peer_load_percent,omitempty"`
	Offered            uint64  `json:"frames_offered"`
	Received           uint64  `json:"frames_received"`
	Lost               uint64  `json:"frames_lost"`
	Overflows          uint64  `json:"rx_overflows"`
	SeqGaps            uint64  `json:"sequence_gaps"`
	Reordered          uint64  `json:"reordered,omitempty"`
	Duplicates         uint64  `json:"duplicates,omitempty"`
	// Error is why the step stopped early (the daemon failed): a failed step.
	Error string `json:"error,omitempty"`
	// LoadAvg is the host's 1-minute load average after the step.
	LoadAvg float64 `json:"host_load_avg_1m"`
	// Clock is what the virtual Pi's clock charged and removed over the step's
	// run: where a loss at a low load came from.
	Clock *bench.ClockResult `json:"sim_clock,omitempty"`
	// FirstLoss is the post-mortem of the step's first loss (package
	// bench/postmortem, settings' PostMortem; nil: off or lossless).
	FirstLoss json.RawMessage `json:"first_loss,omitempty"`
}

// judge sets Lossless: nothing lost, no RX overflow, no sequence gap, no error.
func (s *Step) judge() {
	s.Lossless = s.Error == "" && s.Lost == 0 && s.Overflows == 0 && s.SeqGaps == 0
}

// Cell is one board, bitrate and frame length.
type Cell struct {
	Board   config.SimBoard `json:"board"`
	Bitrate uint32          `json:"bitrate"`
	Length  string          `json:"length"`
	// HighestLossless is the highest load of the grid found lossless (0: even
	// 5 % lost frames); FirstFailing the lowest found to lose (0: 100 % was
	// lossless); Failed is that step.
	HighestLossless int           `json:"highest_lossless_percent"`
	FirstFailing    int           `json:"first_failing_percent"`
	Failed          *Step         `json:"first_failing,omitempty"`
	Steps           []Step        `json:"steps"`
	ClockRule       config.SimCPU `json:"clock_rule"`
	IntPollWindowUs float64       `json:"int_poll_window_us"`
	Commit          string        `json:"commit"`
	// HostLoadAvg: the host's 1-minute load average before the cell and after
	// each step, their mean and maximum.
	HostLoadAvg LoadAvg `json:"host_load_avg_1m"`
	Started     string  `json:"started"`
	DurationS   float64 `json:"duration_s"`
}

// LoadAvg sums samples of the host's load average.
type LoadAvg struct {
	Mean    float64 `json:"mean"`
	Max     float64 `json:"max"`
	Samples int     `json:"samples"`
}

func (l *LoadAvg) add(v float64) {
	if v < 0 {
		return // not read
	}
	l.Mean = (l.Mean*float64(l.Samples) + v) / float64(l.Samples+1)
	l.Max = max(l.Max, v)
	l.Samples++
}

// stepFunc runs one step of a cell at load percent.
type stepFunc func(ctx context.Context, load int) (Step, error)

// searchLoad finds the highest lossless load on the grid: 100 % first, done if
// lossless; otherwise a bisection between the highest load known lossless (0 %
// at first: no frames, nothing to lose) and the lowest known to fail. It
// assumes the loss is monotone in load (see docs/BENCHMARKS.md, "Envelope").
func searchLoad(ctx context.Context, try stepFunc) (lo, hi int, steps []Step, err error) {
	lo, hi = 0, 100
	load := 100
	for {
		s, err := try(ctx, load)
		if err != nil {
			return 0, 0, steps, err
		}
		s.LoadPercent = load
		s.judge()
		steps = append(steps, s)
		if s.Lossless {
			lo = load
		} else {
			hi = load
		}
		if lo == 100 {
			return 100, 0, steps, nil
		}
		if hi-lo <= GridPercent {
			return lo, hi, steps, nil
		}
		load = lo + (hi-lo)/(2*GridPercent)*GridPercent
	}
}

// CellRunner runs the steps of one cell.
type CellRunner func(ctx context.Context, board config.SimBoard, bitrate uint32, length string, load int) (Step, error)

// search is a whole envelope: where its results go and how it runs.
type search struct {
	set      Settings
	path     string
	run      CellRunner
	summary  func(json.RawMessage) string // a FirstLoss as a line of progress (nil: none)
	loadAvg  func() float64
	now      func() time.Time
	progress io.Writer
}

// runCells runs every cell of r.set not yet in f, writing f to r.path after
// each cell. A cancelled context stops it between steps; the cell under way is
// not recorded.
func (r *search) runCells(ctx context.Context, f *File) error {
	todo, steps := r.pending(f)
	per := time.Duration(r.set.StepS*float64(time.Second)) + stepOverhead
	early := ""
	if r.set.StopAtFirstLoss {
		early = "; less as failing steps stop at their first loss"
	}
	fmt.Fprintf(r.progress, "envelope: %d cells, %d done, %d to run: %d to %d steps of %v (+ ~%v start and stop each): %v to %v%s\n",
		len(f.order()), len(f.order())-todo, todo, todo, steps, per-stepOverhead, stepOverhead,
		(time.Duration(todo) * per).Round(time.Minute), (time.Duration(steps) * per).Round(time.Minute), early)
	done := 0
	var spent time.Duration
	for _, k := range f.order() {
		if f.cell(k) != nil {
			continue
		}
		start := r.now()
		c := Cell{Board: k.board, Bitrate: k.bitrate, Length: k.length, ClockRule: r.set.ClockRule,
			IntPollWindowUs: r.set.IntPollWindowUs, Commit: r.set.Commit, Started: start.UTC().Format(time.RFC3339)}
		c.HostLoadAvg.add(r.loadAvg())
		try := func(ctx context.Context, load int) (Step, error) {
			fmt.Fprintf(r.progress, "envelope: %s %s %s at %d %% for %gs...\n", k.board, bench.Rate(k.bitrate), k.length, load, r.set.StepS)
			s, err := r.run(ctx, k.board, k.bitrate, k.length, load)
			s.LoadAvg = r.loadAvg()
			if s.FirstLoss != nil && r.summary != nil {
				fmt.Fprintf(r.progress, "envelope: %s (host load %.2f)\n", r.summary(s.FirstLoss), s.LoadAvg)
			}
			c.HostLoadAvg.add(s.LoadAvg)
			return s, err
		}
		lo, hi, steps, err := searchLoad(ctx, try)
		if err != nil {
			return err
		}
		c.HighestLossless, c.FirstFailing, c.Steps = lo, hi, steps
		for i := range steps {
			if steps[i].LoadPercent == hi {
				c.Failed = &steps[i]
			}
		}
		d := r.now().Sub(start)
		c.DurationS = d.Seconds()
		f.Cells = append(f.Cells, c)
		if err := f.write(r.path); err != nil {
			return err
		}
		done++
		spent += d
		left := time.Duration(todo-done) * (spent / time.Duration(done))
		fmt.Fprintf(r.progress, "envelope: %s %s %s: %s; %d of %d cells left, ~%v at this pace\n",
			k.board, bench.Rate(k.bitrate), k.length, cellText(&c), todo-done, todo, left.Round(time.Minute))
	}
	return nil
}

// pending is how many cells of f are still to run and the most steps they take.
func (r *search) pending(f *File) (cells, steps int) {
	for _, k := range f.order() {
		if f.cell(k) == nil {
			cells++
		}
	}
	return cells, cells * MaxSteps
}
