package daemon

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cand/config"
	"cand/hw/cpufreq"
)

// fakeClock is a cpufreq directory with one policy at 600/1200 MHz and a state
// file path beside it.
func fakeClock(t *testing.T, systemd bool) cpuClock {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cpufreq")
	p := filepath.Join(dir, "policy0")
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, v := range map[string]string{"scaling_min_freq": "600000", "scaling_max_freq": "1200000", "affected_cpus": "0 1 2 3"} {
		if err := os.WriteFile(filepath.Join(p, f), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return cpuClock{sys: cpufreq.New(dir), state: filepath.Join(t.TempDir(), "state"), systemd: systemd}
}

func (c cpuClock) min(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.sys.Dir, "policy0", "scaling_min_freq"))
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return line
}

func bufLog() (*slog.Logger, *bytes.Buffer) {
	var b bytes.Buffer
	return slog.New(slog.NewTextHandler(&b, nil)), &b
}

// realHold is the real backend with the option on.
func realHold() *config.Hardware {
	return &config.Hardware{Backend: config.BackendBCM2835, HoldCPUClock: true}
}

// Run directly, cand holds the clock itself and restores it at the end; the log
// says a crash would leave it held.
func TestDaemonHoldsCPUClock(t *testing.T) {
	c := fakeClock(t, false)
	log, out := bufLog()
	restore := c.hold(realHold(), log)
	if restore == nil || c.min(t) != "1200000" {
		t.Fatalf("held: restore %v, scaling_min_freq %s; want held at 1200000\n%s", restore != nil, c.min(t), out)
	}
	if !strings.Contains(out.String(), "a crash leaves it held until cand cpufreq restore") {
		t.Errorf("log does not say what a crash leaves:\n%s", out)
	}
	restore()
	if c.min(t) != "600000" {
		t.Errorf("after the restore scaling_min_freq %s, want 600000", c.min(t))
	}
	if _, err := os.Stat(c.state); err == nil {
		t.Error("the state file stays after the restore")
	}
}

// Under systemd with the unit's hold in force (its state file there), cand
// leaves the clock to the unit's steps.
func TestDaemonLeavesTheUnitsHold(t *testing.T) {
	c := fakeClock(t, true)
	if err := os.WriteFile(c.state, []byte("policy0 600000 1200000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log, out := bufLog()
	if restore := c.hold(realHold(), log); restore != nil || c.min(t) != "600000" {
		t.Errorf("under the unit's hold: restore %v, scaling_min_freq %s; want cand to leave it alone", restore != nil, c.min(t))
	}
	if !strings.Contains(out.String(), "held at its maximum by the unit's ExecStartPre=+ step") {
		t.Errorf("log does not name the unit's hold:\n%s", out)
	}
}

// Without cpufreq, or on the virtual Pi, or with the option off, nothing is
// held; without cpufreq that is said once, naming the directory.
func TestDaemonHoldsNothing(t *testing.T) {
	c := fakeClock(t, false)
	c.sys = cpufreq.New(filepath.Join(t.TempDir(), "none"))
	log, out := bufLog()
	if restore := c.hold(realHold(), log); restore != nil {
		t.Error("a restore without cpufreq")
	}
	if n := strings.Count(out.String(), "cpu clock: cpufreq: "+c.sys.Dir+" does not exist: no CPU frequency scaling on this kernel"); n != 1 {
		t.Errorf("%d log lines naming the missing directory, want 1:\n%s", n, out)
	}
	c = fakeClock(t, false)
	for _, h := range []config.Hardware{{Backend: config.BackendSim, HoldCPUClock: true}, {Backend: config.BackendBCM2835}} {
		log, out := bufLog()
		if restore := c.hold(&h, log); restore != nil || c.min(t) != "600000" || out.Len() != 0 {
			t.Errorf("backend %s hold %v: restore %v, scaling_min_freq %s, log %q; want nothing done", h.Backend, h.HoldCPUClock, restore != nil, c.min(t), out)
		}
	}
}
