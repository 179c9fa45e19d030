// Package check compares a benchmark run with a baseline report (`cand bench
// -check`, `make bench-check`; docs/BENCHMARKS.md, "Baseline"): frames lost and
// SPI bytes per frame exactly, stage latencies within a tolerance.
package check

import (
	"fmt"
	"io"
	"math"
	"sort"

	"cand/bench"
)

// Tolerance is how much a stage's p50 may grow before a run counts as worse
// than its baseline: Percent of the baseline plus AbsUs. Latencies on a shared
// build machine move with its load (and quantiles are bucket bounds, one bucket
// being about 9 %), so the default is generous; frames lost and SPI bytes per
// frame are compared exactly.
type Tolerance struct {
	Percent float64
	AbsUs   float64
}

// DefaultTolerance: a p50 may grow by half plus 5 µs.
var DefaultTolerance = Tolerance{Percent: 50, AbsUs: 5}

// MinSamples is the fewest samples a stage needs, in the baseline and in the
// run, for its p50 to be compared: the SPI kinds used only while the controller
// starts (RESET, WRITE, READ) have a handful, whose p50 is one host hiccup.
const MinSamples = 100

// Regression is one way a scenario got worse than its baseline.
type Regression struct {
	Scenario string
	What     string
	Baseline float64
	Now      float64
	Unit     string
	// Failed: the scenario failed (What is why); no figures.
	Failed bool
}

func (r Regression) String() string {
	if r.Failed {
		return fmt.Sprintf("%s: failed: %s", r.Scenario, r.What)
	}
	return fmt.Sprintf("%s: %s %s → %s%s", r.Scenario, r.What, num(r.Baseline), num(r.Now), r.Unit)
}

func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// Compare compares run with baseline, scenario by scenario (by name), and returns
// every way a scenario got worse, and notes on what it could not compare:
//   - a scenario that failed (Error) where its baseline did not;
//   - more frames lost, or more TX frames unsent, than the baseline (exact);
//   - more SPI bytes per RX or per TX frame than the baseline (exact, at the
//     two decimals the tables print);
//   - a stage whose p50 grew beyond the baseline's by more than tol (stages with
//     at least MinSamples samples on both sides).
//
// Frames lost are not judged for scenarios that measure the host rather than cand
// (Stress, SharedCPU): a note says so. Scenarios in only one of the two are notes.
func Compare(baseline, run *bench.Report, tol Tolerance) (worse []Regression, notes []string) {
	base := map[string]*bench.ScenarioResult{}
	for i := range baseline.Scenarios {
		base[baseline.Scenarios[i].Name] = &baseline.Scenarios[i]
	}
	seen := map[string]bool{}
	for i := range run.Scenarios {
		s := &run.Scenarios[i]
		seen[s.Name] = true
		b, ok := base[s.Name]
		if !ok {
			notes = append(notes, fmt.Sprintf("%s: not in the baseline", s.Name))
			continue
		}
		worse = append(worse, checkScenario(b, s, tol, &notes)...)
	}
	for _, b := range baseline.Scenarios {
		if !seen[b.Name] {
			notes = append(notes, fmt.Sprintf("%s: in the baseline, not in this run", b.Name))
		}
	}
	return worse, notes
}

func checkScenario(b, s *bench.ScenarioResult, tol Tolerance, notes *[]string) []Regression {
	var out []Regression
	add := func(what string, was, now float64, unit string) {
		out = append(out, Regression{Scenario: s.Name, What: what, Baseline: was, Now: now, Unit: unit})
	}
	if s.Error != "" && b.Error == "" {
		out = append(out, Regression{Scenario: s.Name, What: s.Error, Failed: true})
		return out
	}
	if s.Stress || s.SharedCPU {
		*notes = append(*notes, fmt.Sprintf("%s: frames lost not judged (it measures the build machine: stress or host time)", s.Name))
	} else {
		if s.FramesLost > b.FramesLost {
			add("frames lost", float64(b.FramesLost), float64(s.FramesLost), "")
		}
		if s.TXUnsent > b.TXUnsent {
			add("TX frames unsent", float64(b.TXUnsent), float64(s.TXUnsent), "")
		}
	}
	if cents(s.SPIBytesPerRXFrame) > cents(b.SPIBytesPerRXFrame) {
		add("SPI bytes per RX frame", b.SPIBytesPerRXFrame, s.SPIBytesPerRXFrame, "")
	}
	if cents(s.SPIBytesPerTXFrame) > cents(b.SPIBytesPerTXFrame) {
		add("SPI bytes per TX frame", b.SPIBytesPerTXFrame, s.SPIBytesPerTXFrame, "")
	}
	names := make([]string, 0, len(b.Stages))
	for n := range b.Stages {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		bs := b.Stages[n]
		if bs.Count < MinSamples {
			continue
		}
		st, ok := s.Stages[n]
		if !ok || st.Count < MinSamples {
			*notes = append(*notes, fmt.Sprintf("%s: stage %s has fewer than %d samples in this run", s.Name, n, MinSamples))
			continue
		}
		if st.P50 > bs.P50*(1+tol.Percent/100)+tol.AbsUs {
			add(n+" p50", bs.P50, st.P50, " µs")
		}
	}
	return out
}

// cents rounds to the two decimals the tables print.
func cents(v float64) int64 { return int64(math.Round(v * 100)) }

// Write writes Compare's outcome: every regression, then the notes.
func Write(w io.Writer, baselinePath string, worse []Regression, notes []string, tol Tolerance) {
	fmt.Fprintf(w, "### Against the baseline %s\n\n", baselinePath)
	fmt.Fprintf(w, "Worse means: a scenario failed, lost more frames (or left more TX frames unsent), or needed more SPI bytes per frame than in the baseline (exact), or a stage's p50 grew by more than %g %% + %g µs (stages with %d samples or more).\n\n", tol.Percent, tol.AbsUs, MinSamples)
	if len(worse) == 0 {
		fmt.Fprintln(w, "No scenario got worse.")
	} else {
		fmt.Fprintf(w, "%d regressions:\n\n", len(worse))
		for _, r := range worse {
			fmt.Fprintf(w, "- %s\n", r)
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nNot compared:")
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintf(w, "- %s\n", n)
		}
	}
	fmt.Fprintln(w)
}
