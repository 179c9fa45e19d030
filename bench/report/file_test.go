package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cand/bench"
)

// A written report reads back as the baseline.
func TestWrittenReportReadsBack(t *testing.T) {
	rep := &bench.Report{Board: &bench.BoardInfo{Backend: "sim", Model: "virtual Pi (sim)"}, Scenarios: []bench.ScenarioResult{bench.ScenarioResult{Name: "a", Stages: map[string]bench.Stage{"rx_end_to_end": {P50: 20, Count: 1000}}, Traffic: bench.Traffic{SPIBytesPerTXFrame: 17.004}}}}
	rep.Scenarios[0].Kernel = &bench.KernelResult{FramesLost: 7}
	dir := t.TempDir()
	path, _, err := Write(rep, dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Board.Model != "virtual Pi (sim)" || len(got.Scenarios) != 1 || got.Scenarios[0].Stages["rx_end_to_end"].P50 != 20 ||
		got.Scenarios[0].Kernel.FramesLost != 7 || got.Scenarios[0].SPIBytesPerTXFrame != 17.004 {
		t.Fatalf("read back %+v", got)
	}
	if _, err := Read(filepath.Join(dir, "none.json")); err == nil {
		t.Fatal("a missing baseline reads")
	}
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte("{"), 0o644)
	if _, err := Read(filepath.Join(dir, "bad.json")); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Fatalf("a broken baseline: %v", err)
	}
}
