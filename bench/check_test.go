package bench

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func checkScenarioFixture(name string) ScenarioResult {
	return ScenarioResult{Name: name, RXFigures: RXFigures{FramesOffered: 1000, FramesReceived: 998, FramesLost: 2, SPIBytesPerRXFrame: 16}, Traffic: Traffic{SPIBytesPerTXFrame: 17.004},
		Stages: map[string]Stage{"rx_end_to_end": {P50: 20, Count: 1000}, "int_handled": {P50: 10, Count: 1000}, "tx_socket_to_rts": {Count: 0},
			"spi_reset_poll": {P50: 4, Count: 1}}}
}

// Each rule of Check on synthetic results: losses and bytes exact, p50s within
// the tolerance, failures, host-dominated scenarios' losses not judged, and the
// scenarios only one side has.
func TestCheck(t *testing.T) {
	base := &Report{Scenarios: []ScenarioResult{checkScenarioFixture("same"), checkScenarioFixture("lost"), checkScenarioFixture("bytes"),
		checkScenarioFixture("slow"), checkScenarioFixture("failed"), checkScenarioFixture("stress"), checkScenarioFixture("gone"),
		checkScenarioFixture("better")}}
	run := &Report{Scenarios: []ScenarioResult{checkScenarioFixture("same"), checkScenarioFixture("lost"), checkScenarioFixture("bytes"),
		checkScenarioFixture("slow"), checkScenarioFixture("failed"), checkScenarioFixture("stress"), checkScenarioFixture("new"),
		checkScenarioFixture("better")}}
	r := run.Scenarios
	r[0].SPIBytesPerTXFrame = 17.0049                         // prints as 17.00: the same
	r[0].Stages["rx_end_to_end"] = Stage{P50: 35, Count: 500} // 20 × 1.5 + 5: at the limit
	r[0].Stages["spi_reset_poll"] = Stage{P50: 400, Count: 1} // too few samples to judge
	r[1].FramesLost, r[1].TXUnsent = 3, 1
	r[2].SPIBytesPerRXFrame = 16.01
	r[3].Stages["int_handled"] = Stage{P50: 20.1, Count: 900}
	delete(r[3].Stages, "rx_end_to_end")
	r[4].Error = "daemon exited"
	r[5].Stress, r[5].FramesLost = true, 500
	r[7].FramesLost, r[7].SPIBytesPerRXFrame = 0, 14
	r[7].Stages["rx_end_to_end"] = Stage{P50: 5, Count: 100}
	r[7].Stages["int_handled"] = Stage{P50: 50, Count: 99} // too few samples now

	worse, notes := Check(base, run, DefaultTolerance)
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
	if w, _ := Check(base, base, CheckTolerance{}); len(w) != 0 {
		t.Errorf("a run against itself: %v", w)
	}

	var out strings.Builder
	WriteCheck(&out, "bench/baseline.json", worse, notes, DefaultTolerance)
	for _, s := range []string{"### Against the baseline bench/baseline.json", "5 regressions:", "- lost: frames lost 2 → 3", "Not compared:", "- new: not in the baseline"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("check output lacks %q:\n%s", s, out.String())
		}
	}
}

// A written report reads back as the baseline.
func TestReadReport(t *testing.T) {
	rep := &Report{Board: &BoardInfo{Backend: "sim", Model: "virtual Pi (sim)"}, Scenarios: []ScenarioResult{checkScenarioFixture("a")}}
	rep.Scenarios[0].Kernel = &KernelResult{FramesLost: 7}
	dir := t.TempDir()
	path, _, err := Write(rep, dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Board.Model != "virtual Pi (sim)" || len(got.Scenarios) != 1 || got.Scenarios[0].Stages["rx_end_to_end"].P50 != 20 ||
		got.Scenarios[0].Kernel.FramesLost != 7 || got.Scenarios[0].SPIBytesPerTXFrame != 17.004 {
		t.Fatalf("read back %+v", got)
	}
	if _, err := ReadReport(filepath.Join(dir, "none.json")); err == nil {
		t.Fatal("a missing baseline reads")
	}
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte("{"), 0o644)
	if _, err := ReadReport(filepath.Join(dir, "bad.json")); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Fatalf("a broken baseline: %v", err)
	}
}
