package check

import (
	"reflect"
	"strings"
	"testing"

	"cand/bench"
)

func checkScenarioFixture(name string) bench.ScenarioResult {
	return bench.ScenarioResult{Name: name, RXFigures: bench.RXFigures{FramesOffered: 1000, FramesReceived: 998, FramesLost: 2, SPIBytesPerRXFrame: 16}, Traffic: bench.Traffic{SPIBytesPerTXFrame: 17.004},
		Stages: map[string]bench.Stage{"rx_end_to_end": {P50: 20, Count: 1000}, "int_handled": {P50: 10, Count: 1000}, "tx_socket_to_rts": {Count: 0},
			"spi_reset_poll": {P50: 4, Count: 1}}}
}

// Each rule of Check on synthetic results: losses and bytes exact, p50s within
// the tolerance, failures, host-dominated scenarios' losses not judged, and the
// scenarios only one side has.
func TestCheck(t *testing.T) {
	base := &bench.Report{Scenarios: []bench.ScenarioResult{checkScenarioFixture("same"), checkScenarioFixture("lost"), checkScenarioFixture("bytes"),
		checkScenarioFixture("slow"), checkScenarioFixture("failed"), checkScenarioFixture("stress"), checkScenarioFixture("gone"),
		checkScenarioFixture("better")}}
	run := &bench.Report{Scenarios: []bench.ScenarioResult{checkScenarioFixture("same"), checkScenarioFixture("lost"), checkScenarioFixture("bytes"),
		checkScenarioFixture("slow"), checkScenarioFixture("failed"), checkScenarioFixture("stress"), checkScenarioFixture("new"),
		checkScenarioFixture("better")}}
	r := run.Scenarios
	r[0].SPIBytesPerTXFrame = 17.0049                               // prints as 17.00: the same
	r[0].Stages["rx_end_to_end"] = bench.Stage{P50: 35, Count: 500} // 20 × 1.5 + 5: at the limit
	r[0].Stages["spi_reset_poll"] = bench.Stage{P50: 400, Count: 1} // too few samples to judge
	r[1].FramesLost, r[1].TXUnsent = 3, 1
	r[2].SPIBytesPerRXFrame = 16.01
	r[3].Stages["int_handled"] = bench.Stage{P50: 20.1, Count: 900}
	delete(r[3].Stages, "rx_end_to_end")
	r[4].Error = "daemon exited"
	r[5].Stress, r[5].FramesLost = true, 500
	r[7].FramesLost, r[7].SPIBytesPerRXFrame = 0, 14
	r[7].Stages["rx_end_to_end"] = bench.Stage{P50: 5, Count: 100}
	r[7].Stages["int_handled"] = bench.Stage{P50: 50, Count: 99} // too few samples now

	worse, notes := Compare(base, run, DefaultTolerance)
	var got []string
	for _, w := range worse {
		got = append(got, w.String())
	}
	want := []string{
		"lost: frames lost 2 → 3",
		"lost: TX frames unsent 0 → 1",
		"bytes: SPI bytes per RX frame 16 → 16.01",
		"slow: int_handled p50 10 → 20.10 µs",
		"failed: failed: daemon exited",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("regressions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantNotes := []string{
		"slow: stage rx_end_to_end has fewer than 100 samples in this run",
		"stress: frames lost not judged (it measures the build machine: stress or host time)",
		"new: not in the baseline",
		"better: stage int_handled has fewer than 100 samples in this run",
		"gone: in the baseline, not in this run",
	}
	if !reflect.DeepEqual(notes, wantNotes) {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(notes, "\n"), strings.Join(wantNotes, "\n"))
	}
	if w, _ := Compare(base, base, Tolerance{}); len(w) != 0 {
		t.Errorf("a run against itself: %v", w)
	}

	var out strings.Builder
	Write(&out, "bench/baseline.json", worse, notes, DefaultTolerance)
	for _, s := range []string{"### Against the baseline bench/baseline.json", "5 regressions:", "- lost: frames lost 2 → 3", "Not compared:", "- new: not in the baseline"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("check output lacks %q:\n%s", s, out.String())
		}
	}
}
