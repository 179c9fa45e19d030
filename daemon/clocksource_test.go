package daemon

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cand/config"
	"cand/internal/mono"
	"cand/internal/waitfor"
)

// The clock each virtual board reads its time from: the System Timer on the
// boards without a vDSO clock (Pi Zero, Pi 1), the runtime's clock on the others;
// hardware.clock_source overrides it (a Pi 4 on a 32-bit kernel with a device
// tree from before 2025 is the pi4 board with system_timer).
func TestSimClockSourcePerProfile(t *testing.T) {
	for _, tc := range []struct {
		board   config.SimBoard
		setting config.ClockSource
		want    config.ClockSource
		why     string
	}{
		{config.SimBoardPiZero, config.ClockSourceAuto, config.ClockSourceSystemTimer, "ARM1176JZF-S has no ARM Generic Timer"},
		{config.SimBoardPi1, config.ClockSourceAuto, config.ClockSourceSystemTimer, "ARM1176JZF-S has no ARM Generic Timer"},
		{config.SimBoardPi2, config.ClockSourceAuto, config.ClockSourceRuntime, "Cortex-A7 has the ARM Generic Timer"},
		{config.SimBoardPi3, config.ClockSourceAuto, config.ClockSourceRuntime, "Cortex-A53 has the ARM Generic Timer"},
		{config.SimBoardPi4, config.ClockSourceAuto, config.ClockSourceRuntime, "Cortex-A72 has the ARM Generic Timer"},
		{config.SimBoardPi4, config.ClockSourceSystemTimer, config.ClockSourceSystemTimer, "hardware.clock_source: system_timer"},
		{config.SimBoardPi1, config.ClockSourceRuntime, config.ClockSourceRuntime, "hardware.clock_source: runtime"},
	} {
		t.Run(string(tc.board)+"/"+string(tc.setting), func(t *testing.T) {
			cfg, err := config.Parse("test.yaml", []byte("hardware: {sim_board: "+string(tc.board)+", sim_cpu: shared, clock_source: "+
				string(tc.setting)+"}\ncontrollers:\n  - bitrate: 500000\n"))
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			b, err := openSim(cfg, nil, slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer b.close()
			src := b.clockSource()
			if src.name != tc.want || !strings.Contains(src.reason, tc.why) {
				t.Fatalf("clock source %q (%s), want %q with %q", src.name, src.reason, tc.want, tc.why)
			}
			if n := strings.Count(logs.String(), "msg=\"clock source\" source="+string(tc.want)+" "); n != 1 {
				t.Fatalf("%d log lines naming the clock source, want 1:\n%s", n, logs.String())
			}
			if (b.timer != nil) != (tc.want == config.ClockSourceSystemTimer) {
				t.Fatalf("System Timer clock %v with source %s", b.timer != nil, tc.want)
			}
			// Either clock reads the board's time: the System Timer's within its
			// 1 µs resolution.
			board := b.pi.Clock()
			for range 100 {
				before := board.Now()
				now := b.clock().Now()
				after := board.Now()
				if now < before-1000 || now > after+1000 {
					t.Fatalf("clock read %d outside the board's time %d..%d ± 1 µs", now, before, after)
				}
			}
		})
	}
}

func TestChooseClock(t *testing.T) {
	syscall := mono.Verdict{Syscall: true, Known: true, Reason: "no vDSO"}
	vdso := mono.Verdict{Known: true, Reason: "vDSO"}
	doubt := mono.Verdict{Known: true, Reason: "vDSO", Disagrees: true}
	for _, tc := range []struct {
		setting config.ClockSource
		v       mono.Verdict
		want    clockSource
	}{
		{config.ClockSourceAuto, syscall, clockSource{config.ClockSourceSystemTimer, "reading the runtime's clock is a system call here: no vDSO", false}},
		{config.ClockSourceAuto, vdso, clockSource{config.ClockSourceRuntime, "reading the runtime's clock is no system call here: vDSO", false}},
		{config.ClockSourceAuto, doubt, clockSource{config.ClockSourceRuntime, "reading the runtime's clock is no system call here: vDSO", true}},
		{config.ClockSourceRuntime, syscall, clockSource{config.ClockSourceRuntime, "hardware.clock_source: runtime: no vDSO", false}},
		{config.ClockSourceSystemTimer, vdso, clockSource{config.ClockSourceSystemTimer, "hardware.clock_source: system_timer: vDSO", false}},
	} {
		if got := chooseClock(tc.setting, tc.v); got != tc.want {
			t.Errorf("chooseClock(%s, %+v) = %+v, want %+v", tc.setting, tc.v, got, tc.want)
		}
	}
}

// On a Pi Zero the driver runs on the modelled System Timer clock (auto), or on
// the runtime's (the setting): frames flow either way, and the interrupt's
// latency, a kernel edge timestamp (the board's clock) against a clock reading,
// has a median above zero and nothing absurd.
func TestSystemTimerClockEndToEnd(t *testing.T) {
	for _, src := range []config.ClockSource{config.ClockSourceSystemTimer, config.ClockSourceRuntime} {
		t.Run(string(src), func(t *testing.T) {
			rc := newRigConfig(t).board(config.SimBoardPiZero).peer(periodicPeer("p", 10*time.Millisecond, 8, 0x100))
			if src == config.ClockSourceRuntime {
				rc.hardware = append(rc.hardware, "clock_source: runtime")
			}
			r := rc.start()
			for seen := range 20 {
				if _, _, err := r.read(0, 5*time.Second); err != nil {
					t.Fatalf("after %d frames: %v", seen, err)
				}
			}
			if got := r.log.lines(`msg="clock source" source=` + string(src)); len(got) != 1 {
				t.Fatalf("%d log lines of the clock source %s, want 1:\n%s", len(got), src, r.log)
			}
			s := r.d.Owner.Ports[0].M.IntToHandler.Snapshot()
			if s.Count == 0 || s.P50 <= 0 || s.Max > time.Second {
				t.Fatalf("int_to_handler %+v: want observations, a median above zero, none above 1 s", s)
			}
			t.Logf("int_to_handler %v", s)
			r.checkConservation()
		})
	}
}

// BenchmarkClockRead is one reading of the board's clock as the owner thread
// makes it: the runtime's clock (mono.Now, CLOCK_MONOTONIC through this host's
// vDSO), and the System Timer clock on the virtual Pi Zero (three register
// accesses on the model, on host time, and the conversion).
func BenchmarkClockRead(b *testing.B) {
	b.Run("runtime", func(b *testing.B) {
		for b.Loop() {
			_ = mono.Now()
		}
	})
	b.Run("system_timer_sim_pi-zero", func(b *testing.B) {
		cfg, err := config.Parse("bench.yaml", []byte("hardware: {sim_board: pi-zero, sim_cpu: shared}\ncontrollers:\n  - bitrate: 500000\n"))
		if err != nil {
			b.Fatal(err)
		}
		sb, err := openSim(cfg, nil, slog.New(slog.DiscardHandler))
		if err != nil {
			b.Fatal(err)
		}
		defer sb.close()
		clk := sb.clock()
		for b.Loop() {
			_ = clk.Now()
		}
	})
}

// tickCounter is a counter the test moves.
type tickCounter struct{ c atomic.Uint64 }

func (t *tickCounter) Count() uint64 { return t.c.Load() }

// keepTied ties the System Timer clock again and again off the frame path; a
// failing sample keeps the last tie and is logged once until one succeeds.
func TestKeepTied(t *testing.T) {
	var (
		counter tickCounter
		mu      sync.Mutex
		fail    bool
	)
	sample := func() (mono.Sample, error) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return mono.Sample{}, errors.New("stuck")
		}
		c := counter.c.Add(1000) // a millisecond a sample, at the nominal rate
		return mono.Sample{Mono: int64(c) * 1000, Count: c}, nil
	}
	h := &hardware{}
	if err := h.useSystemTimer(&counter, sample); err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.keepTiedEvery(ctx, slog.New(slog.NewTextHandler(&logs, nil)), time.Millisecond)
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		if !waitfor.Until(10*time.Second, ok) {
			t.Fatalf("%s: not within 10 s; stats %+v; log:\n%s", what, h.timer.Stats(), logs.String())
		}
	}
	waitFor("3 ties", func() bool { return h.timer.Stats().Ties >= 3 })
	mu.Lock()
	fail = true
	mu.Unlock()
	waitFor("the failure logged", func() bool { return strings.Contains(logs.String(), "cannot tie it to CLOCK_MONOTONIC again") })
	ties := h.timer.Stats().Ties
	mu.Lock()
	fail = false
	mu.Unlock()
	waitFor("ties again", func() bool { return h.timer.Stats().Ties > ties })
	if n := strings.Count(logs.String(), "cannot tie"); n != 1 {
		t.Fatalf("%d log lines of the failure, want 1 until a sample succeeds:\n%s", n, logs.String())
	}
	if s := h.timer.Stats(); s.Restarts != 1 || s.LastErrNs != 0 {
		t.Fatalf("stats %+v: want the first tie's restart only, no error", s)
	}
}
