package bench

import (
	"strings"
	"testing"

	"cand/config"
)

// Every workload makes a valid configuration: its peers, filters, second
// controller and loopback mode reach the controllers.
func TestWorkloadConfigs(t *testing.T) {
	byKind := map[string]*config.Config{}
	byName := map[string]*config.Config{}
	boards := map[string]int{}
	kernel := map[string]int{}
	for _, sc := range Workloads(Quick) {
		cfg, err := sc.Config(nil)
		if err != nil {
			t.Fatalf("%s: %v\n%s", sc.Name, err, sc.yaml())
		}
		if sc.Kernel != KernelOn(sc.Board) || sc.Workload == nil || !strings.HasPrefix(sc.Name, sc.Workload.Kind+"-"+Rate(sc.Bitrate)+"-") ||
			!strings.HasSuffix(sc.Name, "-"+string(sc.Board)) || cfg.Hardware.SimBoard != sc.Board {
			t.Errorf("%s: board %s (config %s), kernel %v, workload %+v", sc.Name, sc.Board, cfg.Hardware.SimBoard, sc.Kernel, sc.Workload)
		}
		if byName[sc.Name] != nil {
			t.Errorf("two scenarios named %s", sc.Name)
		}
		byName[sc.Name] = cfg
		if sc.Workload.Kind == "cangen99" {
			continue // the field check, on the Pi 3 only
		}
		boards[string(sc.Board)]++
		if sc.Kernel {
			kernel[string(sc.Board)]++
		}
		byKind[sc.Workload.Kind] = cfg
	}
	const variants = 2 // dlc0 and dlc8 at 500 kbit/s as well
	if n := len(byKind) + variants; len(boards) != len(WorkloadBoards) || boards[string(KernelBoard)] != n || boards["pi3"] != n ||
		kernel[string(KernelBoard)] != n || kernel["pi3"] != n || len(kernel) != 2 {
		t.Errorf("workloads per board %v, kernel's way %v: want each of the %d kinds and %d variants on each of %v, the kernel's way on pi2 and pi3",
			boards, kernel, len(byKind), variants, WorkloadBoards)
	}
	// The 500 kbit/s variants, on the boards the kernel's way runs on too.
	for _, b := range []string{"pi2", "pi3"} {
		for _, tc := range []struct {
			name string
			dlc  uint8
			ids  int
		}{{"dlc0-500k-", 0, 1024}, {"dlc8-500k-", 8, 1}, {"dlc0-1M-", 0, 1024}, {"dlc8-1M-", 8, 1}} {
			cfg := byName[tc.name+b]
			if cfg == nil {
				t.Errorf("no scenario %s%s", tc.name, b)
				continue
			}
			c := cfg.Controllers[0]
			want := uint32(500_000)
			if strings.Contains(tc.name, "-1M-") {
				want = 1_000_000
			}
			if p := c.Sim.Peers[0]; c.Bitrate != want || *p.DLC != tc.dlc || len(p.IDs) != tc.ids || p.LoadPercent != 100 {
				t.Errorf("%s%s: bitrate %d, peer %+v; want %d bit/s, DLC %d, %d IDs at 100 %%", tc.name, b, c.Bitrate, p, want, tc.dlc, tc.ids)
			}
		}
	}
	if byName["vehicle-500k-pi3"] == nil {
		t.Error("no vehicle-500k-pi3: the kernel's way runs the vehicle workload on the Pi 3 too")
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

// The field check offers cangen's default frames at 99 % of a 1 Mbit/s bus on
// the Pi 3, with the kernel's way: 1021 distinct standard IDs, each with a data
// length drawn as cangen draws it (0..7 each about 1/16, 8 about half).
func TestFieldCheckScenario(t *testing.T) {
	sc := FieldCheck()
	cfg, err := sc.Config(nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, sc.yaml())
	}
	c := cfg.Controllers[0]
	if sc.Name != "cangen99-1M-pi3" || !sc.Kernel || cfg.Hardware.SimBoard != config.SimBoardPi3 || c.Bitrate != 1_000_000 || sc.Duration != FieldCheckDuration {
		t.Fatalf("field check %s: kernel %v, board %s, bitrate %d, %v", sc.Name, sc.Kernel, cfg.Hardware.SimBoard, c.Bitrate, sc.Duration)
	}
	p := c.Sim.Peers[0]
	if p.Kind != config.PeerLoad || p.LoadPercent != 99 || p.Extended || len(p.IDs) != cangenIDs || len(p.DLCs) != cangenIDs {
		t.Fatalf("peer %+v", p)
	}
	seen := map[uint32]bool{}
	var hist [9]int
	for i, id := range p.IDs {
		if id > 0x7FF || seen[id] {
			t.Fatalf("ID %#x: out of range or repeated", id)
		}
		seen[id] = true
		hist[p.DLCs[i]]++
	}
	// 1021 draws: 8 about half the time, each of 0..7 about 1/16 (64); a fixed
	// seed makes the counts exact, these bounds only check the shape.
	if hist[8] < 450 || hist[8] > 570 {
		t.Errorf("DLC 8 drawn %d times of %d, want about half", hist[8], cangenIDs)
	}
	for d := range 8 {
		if hist[d] < 35 || hist[d] > 95 {
			t.Errorf("DLC %d drawn %d times of %d, want about 1/16", d, hist[d], cangenIDs)
		}
	}
	ids2, dlcs2 := cangenFrames(cangenIDs)
	if ids2[0] != p.IDs[0] || dlcs2[100] != p.DLCs[100] {
		t.Error("cangenFrames is not the same from one call to the next")
	}
}
