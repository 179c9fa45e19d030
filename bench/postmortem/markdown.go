package postmortem

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"cand/bench"
	"cand/bench/envelope"
)

// Markdown writes the post-mortems of the failing steps of files: per
// board and bitrate, how many first losses fell in each class, and how many of
// them were at the ARM's idle clock, within 0.5 s of the window's start, and
// had host run delay or steal removed in their stretch. Nothing if no step has
// one.
func Markdown(w io.Writer, files ...*envelope.File) error {
	type key struct {
		board   string
		bitrate uint32
		class   string
	}
	type tally struct{ n, idle, early, host, gc int }
	counts := map[key]*tally{}
	var keys []key
	for _, f := range files {
		for _, c := range f.Cells {
			for _, s := range c.Steps {
				if s.FirstLoss == nil {
					continue
				}
				var fl FirstLoss
				if err := json.Unmarshal(s.FirstLoss, &fl); err != nil {
					return fmt.Errorf("postmortem: first_loss of %s %s %s at %d %%: %w", c.Board, bench.Rate(c.Bitrate), c.Length, s.LoadPercent, err)
				}
				k := key{string(c.Board), c.Bitrate, fl.Class}
				t := counts[k]
				if t == nil {
					t = &tally{}
					counts[k] = t
					keys = append(keys, k)
				}
				t.n++
				if fl.AtMinClock {
					t.idle++
				}
				if fl.LostAtMs < 500 {
					t.early++
				}
				if fl.RunDelayUs+fl.StealUs > 0 {
					t.host++
				}
				if fl.GC.CycleNearLoss || fl.GCPauseInStretch {
					t.gc++
				}
			}
		}
	}
	if len(keys) == 0 {
		return nil
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.board != b.board {
			return a.board < b.board
		}
		if a.bitrate != b.bitrate {
			return a.bitrate < b.bitrate
		}
		return a.class < b.class
	})
	fmt.Fprintln(w, "First losses by class (the largest charged category of the board's time from the second frame before the lost one to its end):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| board | bitrate | class | losses | ARM at idle clock | in the first 0.5 s | host run delay or steal in the stretch | GC near |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|")
	for _, k := range keys {
		t := counts[k]
		fmt.Fprintf(w, "| %s | %s | %s | %d | %d | %d | %d | %d |\n", k.board, bench.Rate(k.bitrate), k.class, t.n, t.idle, t.early, t.host, t.gc)
	}
	return nil
}
