package envelope

import (
	"fmt"
	"io"

	"cand/bench"
)

// Markdown writes f's table: a row per board and frame length, a column
// per bitrate; a cell is the highest lossless load, with the first failing load
// and what it lost when 100 % was not lossless. A document with cells still to
// run says so above the table.
func Markdown(w io.Writer, f *File) {
	s := f.Settings
	done := len(f.Cells)
	if !f.Complete() {
		fmt.Fprintf(w, "**Partial: %d of %d cells done.**\n\n", done, len(f.order()))
	}
	stop := ""
	if s.StopAtFirstLoss {
		stop = "; a failing step stopped at its first loss, its count is up to then"
	}
	fmt.Fprintf(w, "Highest bus load without a lost frame over %gs of host time (%d %% steps; lost frames, RX overflows and sequence gaps all count%s), %s clock rule, int_poll_window %s, commit %s; host load average (1 min) during the cells %s.\n\n",
		s.StepS, GridPercent, stop, s.ClockRule, pollWindowUs(s.IntPollWindowUs), s.Commit, hostLoadText(f))
	fmt.Fprint(w, "| board | frames |")
	for _, br := range s.Bitrates {
		fmt.Fprintf(w, " %s |", bench.Rate(br))
	}
	fmt.Fprint(w, "\n|---|---|")
	for range s.Bitrates {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, b := range s.Boards {
		for _, l := range s.Lengths {
			fmt.Fprintf(w, "| %s | %s |", b, l)
			for _, br := range s.Bitrates {
				text := "not run"
				if c := f.cell(cellKey{b, br, l}); c != nil {
					text = cellText(c)
				}
				fmt.Fprintf(w, " %s |", text)
			}
			fmt.Fprintln(w)
		}
	}
}

// cellText is a cell as the table shows it: "100 %", "85 % (90 %: 12 lost in
// 20.0 s)", "< 5 % (5 %: 40 lost in 0.3 s)".
func cellText(c *Cell) string {
	if c.FirstFailing == 0 {
		return fmt.Sprintf("%d %%", c.HighestLossless)
	}
	best := fmt.Sprintf("%d %%", c.HighestLossless)
	if c.HighestLossless == 0 {
		best = fmt.Sprintf("< %d %%", GridPercent)
	}
	return fmt.Sprintf("%s (%d %%: %s)", best, c.FirstFailing, lossText(c.Failed))
}

// lossText is what a failed step lost in its window (up to its first loss when
// it stopped there): the frames lost, or, when none was missing at the end, the
// sequence gaps (frames that came late, out of order) or RX overflows; or that
// the step failed with an error.
func lossText(s *Step) string {
	var what string
	switch {
	case s == nil:
		return "?"
	case s.Error != "":
		return "error"
	case s.Lost > 0:
		what = fmt.Sprintf("%d lost", s.Lost)
	case s.SeqGaps > 0:
		what = fmt.Sprintf("%d gaps", s.SeqGaps)
	default:
		what = fmt.Sprintf("%d overflows", s.Overflows)
	}
	return fmt.Sprintf("%s in %.1f s", what, s.DurationS)
}

// pollWindowUs is the int_poll_window as the tables show it.
func pollWindowUs(windowUs float64) string {
	if windowUs == 0 {
		return "0 (off)"
	}
	return fmt.Sprintf("%gµs", windowUs)
}

// hostLoadText is the range of the cells' mean load averages and the highest
// sample.
func hostLoadText(f *File) string {
	if len(f.Cells) == 0 {
		return "-"
	}
	lo, hi, top := f.Cells[0].HostLoadAvg.Mean, f.Cells[0].HostLoadAvg.Mean, 0.0
	for _, c := range f.Cells {
		lo, hi, top = min(lo, c.HostLoadAvg.Mean), max(hi, c.HostLoadAvg.Mean), max(top, c.HostLoadAvg.Max)
	}
	return fmt.Sprintf("%.1f–%.1f (per-cell means; highest sample %.1f)", lo, hi, top)
}
