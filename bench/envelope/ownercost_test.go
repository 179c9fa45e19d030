package envelope

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cand/bench"
	"cand/config"
)

// ownerCostEnv lists the steps TestOwnerCostPerFrame runs, comma-separated,
// each board:bitrate:length:load:duration, e.g. pi3:1000000:dlc8:100:20s.
const ownerCostEnv = "CAND_OWNER_COST"

// TestOwnerCostPerFrame runs envelope steps (strict rule, every step for its
// whole window) and logs what the owner thread's running cost per received
// frame: the host ns the strict rule charged at the board's speed (its
// cpu_scaled board ns over the CPU factor less one), the owner thread's whole
// CPU time (register models included), and the process's (the column "CPU
// µs/frame" of cand bench). With go test -cpuprofile the profile's owner
// stacks (bridge.(*Owner).Run) say where that time goes; docs/BENCHMARKS.md,
// "Where the owner's time per frame goes".
func TestOwnerCostPerFrame(t *testing.T) {
	spec := os.Getenv(ownerCostEnv)
	if spec == "" {
		t.Skip(ownerCostEnv + " not set: a measurement, run on request (e.g. " + ownerCostEnv + "=pi3:1000000:dlc8:100:20s)")
	}
	cfg := simConfig(t)
	base := bench.BaseOf(cfg)
	for _, step := range strings.Split(spec, ",") {
		sc, err := ownerCostScenario(step, cfg)
		if err != nil {
			t.Fatal(err)
		}
		load0 := hostLoadAvg()
		res, err := bench.RunScenario(context.Background(), sc, &base)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if res.FramesReceived == 0 || res.Clock.CPUFactor <= 1 {
			t.Fatalf("%s: %d frames received, CPU factor %.2f: nothing to divide by", step, res.FramesReceived, res.Clock.CPUFactor)
		}
		n := float64(res.FramesReceived)
		charged := res.Clock.ChargedMs["cpu_scaled"] * 1e3 / (res.Clock.CPUFactor - 1) / n
		owner := res.OwnerBusy * res.DurationS * 1e6 / n
		t.Logf("%s: %.1f s, offered %d, received %d (%.0f/s), lost %d, overflows %d, ring drops %d, in the ring at close %d; per received frame: "+
			"charged running %.2f host µs, owner thread %.1f host µs, process %.1f µs; CPU factor %.2f at %.0f MHz; host load %.2f → %.2f",
			step, res.DurationS, res.FramesOffered, res.FramesReceived, n/res.DurationS, res.FramesLost, res.RXOverflows, res.RingDrops, res.RingAtClose,
			charged, owner, res.CPUUsPerFrame, res.Clock.CPUFactor, res.Clock.ARMMHz, load0, hostLoadAvg())
		c := res.Clock
		line := fmt.Sprintf("board µs per received frame: running × factor %.1f, system calls %.1f, clock reads %.1f (%.1f reads), parks %.1f (%.2f), wake-ups %.1f (%.2f)",
			(c.ChargedMs["cpu_scaled"]*c.CPUFactor/(c.CPUFactor-1))*1e3/n, (c.ChargedMs["kernel"])*1e3/n, c.ChargedMs["clock_read"]*1e3/n, float64(c.ClockReads)/n,
			c.ChargedMs["park"]*1e3/n, float64(c.Parks)/n, c.ChargedMs["wake_up"]*1e3/n, float64(c.WakeUps)/n)
		for _, op := range slices.Sorted(maps.Keys(c.SystemCalls)) {
			k := c.SystemCalls[op]
			line += fmt.Sprintf("; %s %.2f/frame at %.2f board µs", op, float64(k.Calls)/n, k.BoardMs*1e3/float64(k.Calls))
		}
		t.Log(line)
		for _, st := range c.Stretches {
			t.Logf("  %s → %s, %d calls, %d clock reads: %d gaps, %.2f host µs of running per frame (%.0f ns each), %.2f of it noise",
				st.From, st.To, st.Calls, st.Reads, st.Gaps, st.RunMs*1e3/n, st.RunMs*1e6/float64(st.Gaps), st.NoiseMs*1e3/n)
		}
	}
}

// ownerCostScenario parses board:bitrate:length:load:duration into an envelope
// step's scenario that runs its whole window.
func ownerCostScenario(step string, cfg *config.Config) (bench.Scenario, error) {
	f := strings.Split(step, ":")
	if len(f) != 5 {
		return bench.Scenario{}, fmt.Errorf("%s: %q is not board:bitrate:length:load:duration, e.g. pi3:1000000:dlc8:100:20s", ownerCostEnv, step)
	}
	bitrate, err1 := strconv.ParseUint(f[1], 10, 32)
	load, err2 := strconv.Atoi(f[3])
	d, err3 := time.ParseDuration(f[4])
	if err1 != nil || err2 != nil || err3 != nil || load < 1 || load > 100 {
		return bench.Scenario{}, fmt.Errorf("%s: %q: bitrate, load (1..100) or duration does not parse", ownerCostEnv, step)
	}
	share := 0.0
	if f[2] == LengthMix {
		if share, err1 = mixShare(uint32(bitrate), load); err1 != nil {
			return bench.Scenario{}, err1
		}
	}
	wl, err := workload(f[2], load, share)
	if err != nil {
		return bench.Scenario{}, err
	}
	return bench.Scenario{Name: "owner-cost-" + step, Bitrate: uint32(bitrate), DLC: 8, IntPollWindow: cfg.Controllers[0].IntPollWindow.D(),
		Board: config.SimBoard(f[0]), Rule: config.SimCPUStrict, Duration: d, Workload: wl}, nil
}
