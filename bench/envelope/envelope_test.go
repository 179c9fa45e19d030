package envelope

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"cand/bench"
	"cand/config"
)

// fakeCells lose frames above each cell's threshold (percent) and record the
// loads each cell was run at.
type fakeCells struct {
	limit map[string]int
	tried map[string][]int
}

func fakeName(b config.SimBoard, br uint32, l string) string {
	return string(b) + "/" + bench.Rate(br) + "/" + l
}

func (f *fakeCells) run(ctx context.Context, b config.SimBoard, br uint32, l string, load int) (Step, error) {
	k := fakeName(b, br, l)
	f.tried[k] = append(f.tried[k], load)
	s := Step{Offered: 1000, Received: 1000, DurationS: 1}
	if load > f.limit[k] {
		s.Received, s.Lost, s.Overflows, s.SeqGaps = 1000-uint64(load), uint64(load), uint64(load)/2, uint64(load)
	}
	return s, nil
}

func TestSearchLoadBisectsTheGrid(t *testing.T) {
	for _, tc := range []struct {
		limit  int // the highest lossless load of the fake
		lo, hi int
		loads  []int
	}{
		{limit: 100, lo: 100, hi: 0, loads: []int{100}},
		{limit: 95, lo: 95, hi: 100, loads: []int{100, 50, 75, 85, 90, 95}},
		{limit: 85, lo: 85, hi: 90, loads: []int{100, 50, 75, 85, 90}},
		{limit: 52, lo: 50, hi: 55, loads: []int{100, 50, 75, 60, 55}},
		{limit: 5, lo: 5, hi: 10, loads: []int{100, 50, 25, 10, 5}},
		{limit: 0, lo: 0, hi: 5, loads: []int{100, 50, 25, 10, 5}},
	} {
		var loads []int
		try := func(ctx context.Context, load int) (Step, error) {
			loads = append(loads, load)
			s := Step{Offered: 10, Received: 10}
			if load > tc.limit {
				s.SeqGaps = 1 // a gap alone fails a step
			}
			return s, nil
		}
		lo, hi, steps, err := searchLoad(context.Background(), try)
		if err != nil {
			t.Fatal(err)
		}
		if lo != tc.lo || hi != tc.hi || !reflect.DeepEqual(loads, tc.loads) {
			t.Errorf("limit %d: got %d/%d after %v, want %d/%d after %v", tc.limit, lo, hi, loads, tc.lo, tc.hi, tc.loads)
		}
		if len(steps) != len(loads) || len(steps) > MaxSteps {
			t.Errorf("limit %d: %d steps recorded for %d tried (at most %d)", tc.limit, len(steps), len(loads), MaxSteps)
		}
		for i, s := range steps {
			if s.LoadPercent != loads[i] || s.Lossless != (loads[i] <= tc.limit) {
				t.Errorf("limit %d: step %d = %+v, want load %d lossless %v", tc.limit, i, s, loads[i], loads[i] <= tc.limit)
			}
		}
	}
}

func TestEnvelopeStepFailsOnAnyLoss(t *testing.T) {
	for _, s := range []Step{{Lost: 1}, {Overflows: 1}, {SeqGaps: 1}, {Error: "daemon failed"}} {
		s.judge()
		if s.Lossless {
			t.Errorf("%+v judged lossless", s)
		}
	}
	s := Step{Offered: 5, Received: 5}
	if s.judge(); !s.Lossless {
		t.Errorf("%+v judged lossy", s)
	}
}

func testRun(t *testing.T, path string, fake *fakeCells) *search {
	t.Helper()
	set := Settings{Boards: []config.SimBoard{config.SimBoardPiZero, config.SimBoardPi4}, Bitrates: []uint32{125_000, 1_000_000},
		Lengths: []string{LengthDLC0, LengthMix}, StepS: 1, ClockRule: config.SimCPUStrict, Commit: "v1-2-gabc"}
	return &search{set: set, path: path, run: fake.run, loadAvg: func() float64 { return 3.5 },
		now: func() time.Time { return time.Unix(1e9, 0) }, progress: &bytes.Buffer{}}
}

func TestEnvelopeResumesSkippingDoneCells(t *testing.T) {
	path := filepath.Join(t.TempDir(), "envelope.json")
	fake := &fakeCells{limit: map[string]int{fakeName(config.SimBoardPiZero, 1_000_000, LengthDLC0): 40,
		fakeName(config.SimBoardPi4, 1_000_000, LengthMix): 0}, tried: map[string][]int{}}
	for _, b := range []config.SimBoard{config.SimBoardPiZero, config.SimBoardPi4} {
		for _, l := range []string{LengthDLC0, LengthMix} {
			if _, ok := fake.limit[fakeName(b, 1_000_000, l)]; !ok {
				fake.limit[fakeName(b, 1_000_000, l)] = 100
			}
			fake.limit[fakeName(b, 125_000, l)] = 100
		}
	}
	r := testRun(t, path, fake)
	// The first run stops in its third cell: two are written.
	ctx, cancel := context.WithCancel(context.Background())
	run := r.run
	cells := 0
	r.run = func(c context.Context, b config.SimBoard, br uint32, l string, load int) (Step, error) {
		if load == 100 {
			cells++
		}
		if cells == 3 {
			cancel()
			return Step{}, ctx.Err()
		}
		return run(c, b, br, l, load)
	}
	f, err := open(path, r.set, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.runCells(ctx, f); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v, want context.Canceled", err)
	}
	f, err = Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cells) != 2 || f.Complete() {
		t.Fatalf("after the interrupted run: %d cells, complete %v; want 2, false", len(f.Cells), f.Complete())
	}
	var md bytes.Buffer
	Markdown(&md, f)
	if !strings.Contains(md.String(), "**Partial: 2 of 8 cells done.**") || !strings.Contains(md.String(), "| pi-zero | mix | not run | not run |") {
		t.Errorf("partial table:\n%s", md.String())
	}

	// The rerun with the same settings runs only the 6 cells left.
	fake.tried = map[string][]int{}
	r = testRun(t, path, fake)
	f, err = open(path, r.set, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.runCells(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{fakeName(config.SimBoardPiZero, 125_000, LengthDLC0), fakeName(config.SimBoardPiZero, 1_000_000, LengthDLC0)} {
		if _, ran := fake.tried[k]; ran {
			t.Errorf("%s ran again: %v", k, fake.tried[k])
		}
	}
	if len(fake.tried) != 6 {
		t.Errorf("the rerun ran %d cells, want 6: %v", len(fake.tried), fake.tried)
	}
	f, err = Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Complete() || len(f.Cells) != 8 {
		t.Fatalf("after the rerun: %d cells, complete %v", len(f.Cells), f.Complete())
	}
	c := f.cell(cellKey{config.SimBoardPiZero, 1_000_000, LengthDLC0})
	if c.HighestLossless != 40 || c.FirstFailing != 45 || c.Failed == nil || c.Failed.LoadPercent != 45 || c.Failed.Lost != 45 ||
		c.Failed.Overflows != 22 || c.Failed.SeqGaps != 45 || len(c.Steps) != 6 || c.Commit != "v1-2-gabc" ||
		c.ClockRule != config.SimCPUStrict || c.HostLoadAvg != (LoadAvg{Mean: 3.5, Max: 3.5, Samples: 7}) {
		t.Errorf("pi-zero 1M dlc0 = %+v", c)
	}
	md.Reset()
	Markdown(&md, f)
	want := `| board | frames | 125k | 1M |
|---|---|---:|---:|
| pi-zero | dlc0 | 100 % | 40 % (45 %: 45 lost in 1.0 s) |
| pi-zero | mix | 100 % | 100 % |
| pi4 | dlc0 | 100 % | 100 % |
| pi4 | mix | 100 % | < 5 % (5 %: 5 lost in 1.0 s) |
`
	if got := md.String(); strings.Contains(got, "Partial") || !strings.HasSuffix(got, want) {
		t.Errorf("table:\n%s\nwant it to end with:\n%s", got, want)
	}

	// Other settings are refused, naming the difference and the way out.
	other := r.set
	other.StepS = 20
	if _, err := open(path, other, false); err == nil || !strings.Contains(err.Error(), "step_s 1 there, 20 now") || !strings.Contains(err.Error(), "-fresh") {
		t.Errorf("other settings: %v", err)
	}
	if f, err := open(path, other, true); err != nil || len(f.Cells) != 0 {
		t.Errorf("-fresh: %v, %d cells", err, len(f.Cells))
	}
}

func TestEnvelopeWorkloads(t *testing.T) {
	for _, l := range DefaultLengths {
		wl, err := workload(l, 90, 60)
		if err != nil {
			t.Fatal(err)
		}
		sc := bench.Scenario{Name: "envelope-" + l, Bitrate: 125_000, IntPollWindow: 0, Workload: wl}
		if _, err := sc.Config(nil); err != nil {
			t.Errorf("%s: %v", l, err)
		}
		var loads []float64
		for _, p := range wl.Buses[0].Peers {
			loads = append(loads, p.LoadPercent)
		}
		want := []float64{90}
		if l == LengthMix {
			want = []float64{60, 60}
		}
		if !reflect.DeepEqual(loads, want) {
			t.Errorf("%s: the peers' loads are %v %%, want %v", l, loads, want)
		}
	}
	if _, err := workload("dlc3", 50, 0); err == nil || !strings.Contains(err.Error(), "use dlc0, dlc8, mix") {
		t.Errorf("unknown length: %v", err)
	}
}

// The mix's peers together keep the bus busy the step's load, by the bus
// model, within 0.1 % below to 1 % above.
func TestMixShareKeepsTheBusBusyTheLoad(t *testing.T) {
	for _, load := range []int{100, 85, 50, 5} {
		p, err := mixShare(500_000, load)
		if err != nil {
			t.Fatal(err)
		}
		busy, err := mixBusy(500_000, p)
		if err != nil {
			t.Fatal(err)
		}
		if busy < float64(load)-0.1 || busy > float64(load)+1 || p < float64(load)/2 || p > 90 {
			t.Errorf("load %d %%: share %g %% keeps the bus %.2f %% busy", load, p, busy)
		}
	}
}

// simConfig is deploy/sim.yaml, for the tests that run the daemon on the
// virtual Pi (not in -short).
func simConfig(t *testing.T) *config.Config {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the daemon on the virtual Pi for a step; not in -short")
	}
	cfg, err := config.Load("../../deploy/sim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// One cell on the virtual Pi with a short step: at 10 kbit/s (some 80 frames a
// second) a Pi 4 loses nothing at 100 %, so the cell takes one step.
func TestEnvelopeOneCellOnTheVirtualPi(t *testing.T) {
	cfg := simConfig(t)
	out := filepath.Join(t.TempDir(), FileName)
	var progress bytes.Buffer
	o := Options{Boards: []config.SimBoard{config.SimBoardPi4}, Bitrates: []uint32{10_000}, Lengths: []string{LengthDLC8},
		Step: 300 * time.Millisecond, Config: "deploy/sim.yaml", Commit: "test", Out: out}
	f, err := Run(context.Background(), cfg, o, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if len(f.Cells) != 1 {
		t.Fatalf("%d cells", len(f.Cells))
	}
	c := f.Cells[0]
	if c.HighestLossless != 100 || c.FirstFailing != 0 || c.Failed != nil || len(c.Steps) != 1 {
		t.Fatalf("cell %+v\n%s", c, progress.String())
	}
	s := c.Steps[0]
	if !s.Lossless || s.Offered == 0 || s.Received != s.Offered || s.Lost != 0 || s.Overflows != 0 || s.SeqGaps != 0 || s.Error != "" {
		t.Errorf("step %+v", s)
	}
	if c.ClockRule != config.SimCPUStrict || c.IntPollWindowUs != float64(cfg.Controllers[0].IntPollWindow.D())/1e3 || c.Commit != "test" ||
		c.Board != config.SimBoardPi4 || c.Bitrate != 10_000 || c.Length != LengthDLC8 {
		t.Errorf("cell %+v", c)
	}
	if !strings.Contains(progress.String(), "envelope: 1 cells, 0 done, 1 to run: 1 to 6 steps") {
		t.Errorf("no estimate at the start:\n%s", progress.String())
	}
	t.Logf("step: %+v", s)
	onDisk, err := Read(out)
	if err != nil || !reflect.DeepEqual(onDisk.Cells, f.Cells) {
		t.Errorf("%s: %v, %+v", out, err, onDisk)
	}
	// A rerun resumes: nothing left to run.
	progress.Reset()
	if _, err := Run(context.Background(), cfg, o, &progress); err != nil || !strings.Contains(progress.String(), "1 done, 0 to run") {
		t.Errorf("rerun: %v\n%s", err, progress.String())
	}
	var md bytes.Buffer
	Markdown(&md, f)
	if !strings.Contains(md.String(), "| pi4 | dlc8 | 100 % |") {
		t.Errorf("table:\n%s", md.String())
	}
	if _, err := os.Stat(out + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left: %v", err)
	}
}

// A failing step ends at its first loss: the Pi Zero's profile loses frames of
// a 1 Mbit/s bus full of 0-byte frames at once.
func TestEnvelopeStepStopsAtFirstLoss(t *testing.T) {
	s := failingPiZeroStep(t)
	if !s.StoppedAtFirstLoss || s.Overflows+s.SeqGaps == 0 {
		t.Errorf("step %+v: want it stopped at its first overflow or gap", s)
	}
}

// failingPiZeroStep runs a step that stops at its first loss: the Pi Zero's
// profile on a 1 Mbit/s bus full of 0-byte frames. It skips the test if the
// step lost nothing.
func failingPiZeroStep(t *testing.T) Step {
	t.Helper()
	cfg := simConfig(t)
	base := bench.BaseOf(cfg)
	set := Settings{StepS: 30, ClockRule: config.SimCPUStrict, StopAtFirstLoss: true}
	s, err := PiStep(&base, set, nil)(context.Background(), config.SimBoardPiZero, 1_000_000, LengthDLC0, 100)
	if err != nil {
		t.Fatal(err)
	}
	s.judge()
	if s.Lossless {
		t.Skipf("the Pi Zero profile lost nothing at 1M, DLC 0, 100 %% (%+v): this test needs a load that loses frames", s)
	}
	return s
}
