package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"cand/config"
)

// Every workload makes a valid configuration: its peers, filters, second
// controller and loopback mode reach the controllers.
func TestWorkloadConfigs(t *testing.T) {
	byKind := map[string]*config.Config{}
	boards := map[string]int{}
	for _, sc := range Workloads(Quick) {
		cfg, err := sc.config(nil)
		if err != nil {
			t.Fatalf("%s: %v\n%s", sc.Name, err, sc.yaml())
		}
		if sc.Kernel != (sc.Board == KernelBoard) || sc.Workload == nil || !strings.HasPrefix(sc.Name, sc.Workload.Kind+"-") ||
			!strings.HasSuffix(sc.Name, "-"+string(sc.Board)) || cfg.Hardware.SimBoard != sc.Board {
			t.Errorf("%s: board %s (config %s), kernel %v, workload %+v", sc.Name, sc.Board, cfg.Hardware.SimBoard, sc.Kernel, sc.Workload)
		}
		boards[string(sc.Board)]++
		byKind[sc.Workload.Kind] = cfg
	}
	if len(boards) != len(WorkloadBoards) || boards[string(KernelBoard)] != len(byKind) {
		t.Errorf("workloads per board %v, want each of the %d kinds on each of %v", boards, len(byKind), WorkloadBoards)
	}
	v := byKind["vehicle"].Controllers[0]
	if v.Bitrate != 500_000 || v.Filters == nil || len(v.Filters.Filters) != 5 || len(v.Sim.Peers) != 7 || !v.Sim.Peers[4].Remote || !v.Sim.Peers[5].Extended {
		t.Errorf("vehicle controller %+v", v)
	}
	d := byKind["dual"].Controllers
	if len(d) != 2 || d[1].IntGPIO != ce1IntGPIO || d[1].SPI.ChipSelect.Pin() != 7 || d[0].SPI.ChipSelect.Pin() != 8 {
		t.Errorf("dual controllers %+v", d)
	}
	if l := byKind["loopback"].Controllers[0]; l.Mode != config.ModeLoopback || len(l.Sim.Peers) != 0 {
		t.Errorf("loopback controller %+v", l)
	}
	if p := byKind["stuff-max"].Controllers[0].Sim.Peers[0]; p.Payload != config.PayloadStuffMax || len(p.IDs) != 256 {
		t.Errorf("stuff-max peer %+v", p)
	}
	if p := byKind["dlc0"].Controllers[0].Sim.Peers[0]; *p.DLC != 0 || len(p.IDs) != 1024 {
		t.Errorf("dlc0 peer %+v", p)
	}
}

// The vehicle mix end to end: every frame of the filtered sender stays in the
// chip (cand's filters), while the kernel driver's way, which sets no filters,
// passes them up; frames are counted per sender, the remote frames included.
func TestVehicleWorkload(t *testing.T) {
	var sc Scenario
	for _, s := range Workloads(Durations{Other: 400 * time.Millisecond}) {
		if s.Workload.Kind == "vehicle" && s.Kernel {
			sc = s
		}
	}
	res, err := RunScenario(context.Background(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.FramesOffered == 0 || res.FramesReceived+res.FramesLost < res.FramesOffered || res.FilteredOffered == 0 || res.FilterLeaks != 0 || res.StrayFrames != 0 {
		t.Fatalf("offered %d received %d lost %d, filtered %d leaked %d, stray %d", res.FramesOffered, res.FramesReceived, res.FramesLost,
			res.FilteredOffered, res.FilterLeaks, res.StrayFrames)
	}
	k := res.Kernel
	if k == nil || k.Error != "" || k.FramesOffered == 0 || k.Unfiltered == 0 || k.SPITransfersPerRXFrame <= res.SPITransfersPerRXFrame {
		t.Fatalf("kernel reference %+v (cand %.2f transfers per frame)", k, res.SPITransfersPerRXFrame)
	}
	var md strings.Builder
	Markdown(&md, &Report{Scenarios: []ScenarioResult{res}})
	for _, want := range []string{"| vehicle-500k-pi2 | 500000 | vehicle |", "### Workloads", "| vehicle-500k-pi2 | vehicle |", "### cand and the kernel driver's way, same workload"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("tables lack %q:\n%s", want, md.String())
		}
	}
}
