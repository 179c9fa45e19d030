package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeCPUFreq makes a cpufreq directory with one Pi 3 policy; it returns the
// directory and a state file path.
func fakeCPUFreq(t *testing.T) (dir, state string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "cpufreq")
	p := filepath.Join(dir, "policy0")
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, v := range map[string]string{"scaling_min_freq": "600000", "scaling_max_freq": "1200000", "affected_cpus": "0 1 2 3"} {
		if err := os.WriteFile(filepath.Join(p, f), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, filepath.Join(t.TempDir(), "cand-cpufreq.state")
}

func minFreq(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "policy0", "scaling_min_freq"))
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return line
}

const realBoard = "hardware: {backend: bcm2835}\ncontrollers:\n  - bitrate: 500000\n"

// hold, show, restore and a second restore, as the packaged unit and an operator
// run them.
func TestCPUFreqHoldRestore(t *testing.T) {
	dir, state := fakeCPUFreq(t)
	cfg := writeConfig(t, realBoard)
	code, out, errOut := runCand("cpufreq", "hold", "-config", cfg, "-state", state, "-sysfs", dir)
	want := "cand cpufreq hold: policy0 (CPUs 0 1 2 3): scaling_min_freq 600000 -> 1200000 kHz\n" +
		"cand cpufreq hold: the values before are in " + state + "; cand cpufreq restore puts them back\n"
	if code != 0 || out != want || errOut != "" {
		t.Fatalf("hold: exit %d\nstdout %q\nwant   %q\nstderr %q", code, out, want, errOut)
	}
	if m := minFreq(t, dir); m != "1200000" {
		t.Errorf("after hold scaling_min_freq %s, want 1200000", m)
	}
	code, out, _ = runCand("cpufreq", "show", "-state", state, "-sysfs", dir)
	want = "policy0 (CPUs 0 1 2 3): scaling_min_freq 1200000 kHz, scaling_max_freq 1200000 kHz: held at its maximum\n" +
		"state file " + state + ": a hold is in force (cand cpufreq restore ends it)\n"
	if code != 0 || out != want {
		t.Errorf("show: exit %d\nstdout %q\nwant   %q", code, out, want)
	}
	code, out, errOut = runCand("cpufreq", "restore", "-state", state, "-sysfs", dir)
	if want := "cand cpufreq restore: policy0: scaling_min_freq back to 600000 kHz\n"; code != 0 || out != want || errOut != "" {
		t.Fatalf("restore: exit %d\nstdout %q\nwant   %q\nstderr %q", code, out, want, errOut)
	}
	if m := minFreq(t, dir); m != "600000" {
		t.Errorf("after restore scaling_min_freq %s, want 600000", m)
	}
	code, out, _ = runCand("cpufreq", "restore", "-state", state, "-sysfs", dir)
	if want := "cand cpufreq restore: no state file " + state + ": nothing to restore (no hold in force, or restored already)\n"; code != 0 || out != want {
		t.Errorf("second restore: exit %d\nstdout %q\nwant   %q", code, out, want)
	}
}

// hold does nothing, successfully, where the configuration does not ask for it
// or the kernel has no cpufreq.
func TestCPUFreqHoldNothing(t *testing.T) {
	dir, state := fakeCPUFreq(t)
	for _, c := range []struct {
		name, config, sysfs, want string
	}{
		{"option off", "hardware: {backend: bcm2835, hold_cpu_clock: false}\ncontrollers:\n  - bitrate: 500000\n", dir,
			": hardware.hold_cpu_clock is false: the CPU clock is left to its governor\n"},
		{"simulator", "hardware: {hold_cpu_clock: true}\ncontrollers:\n  - bitrate: 500000\n", dir,
			": backend sim: the virtual Pi plays hardware.hold_cpu_clock itself; the CPU clock is left alone\n"},
		{"no cpufreq", realBoard, filepath.Join(dir, "absent"),
			"cpufreq: " + filepath.Join(dir, "absent") + " does not exist: no CPU frequency scaling on this kernel"},
	} {
		cfg := writeConfig(t, c.config)
		code, out, errOut := runCand("cpufreq", "hold", "-config", cfg, "-state", state, "-sysfs", c.sysfs)
		if code != 0 || !strings.Contains(out, c.want) || errOut != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 0 and %q", c.name, code, out, errOut, c.want)
		}
		if m := minFreq(t, dir); m != "600000" {
			t.Errorf("%s: scaling_min_freq %s, want 600000 untouched", c.name, m)
		}
		if _, err := os.Stat(state); err == nil {
			t.Errorf("%s: a state file was written", c.name)
		}
	}
}

// With the option off, a state file left by an earlier hold is pointed out.
func TestCPUFreqHoldOffNamesLeftHold(t *testing.T) {
	dir, state := fakeCPUFreq(t)
	if code, _, errOut := runCand("cpufreq", "hold", "-config", writeConfig(t, realBoard), "-state", state, "-sysfs", dir); code != 0 {
		t.Fatalf("hold: exit %d: %s", code, errOut)
	}
	off := writeConfig(t, "hardware: {backend: bcm2835, hold_cpu_clock: false}\ncontrollers:\n  - bitrate: 500000\n")
	code, out, _ := runCand("cpufreq", "hold", "-config", off, "-state", state, "-sysfs", dir)
	want := "cand cpufreq hold: but " + state + " is there: an earlier hold was not restored; cand cpufreq restore -state " + state + " ends it\n"
	if code != 0 || !strings.HasSuffix(out, want) {
		t.Errorf("hold with the option off over a hold: exit %d, stdout %q; want it to end %q", code, out, want)
	}
}

// Usage errors exit 2 with the synopsis.
func TestCPUFreqUsage(t *testing.T) {
	for _, args := range [][]string{{"cpufreq"}, {"cpufreq", "hod"}, {"cpufreq", "restore", "extra"}, {"cpufreq", "restore", "-config", "x"}} {
		code, _, errOut := runCand(args...)
		if code != 2 || !strings.Contains(errOut, "cand cpufreq") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and the usage", args, code, errOut)
		}
	}
}
