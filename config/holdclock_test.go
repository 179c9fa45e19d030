package config

import (
	"strings"
	"testing"
)

// hardware.hold_cpu_clock is a boolean, true by default on the real backend and
// false on the virtual Pi; what the file says wins on either.
func TestHoldCPUClockKey(t *testing.T) {
	for _, c := range []struct {
		hardware string
		want     bool
	}{
		{"{backend: bcm2835}", true},
		{"{backend: bcm2835, hold_cpu_clock: false}", false},
		{"{backend: sim}", false},
		{"{}", false},
		{"{backend: sim, hold_cpu_clock: true}", true},
		{"{hold_cpu_clock: true}", true},
	} {
		cfg, err := Parse("x.yaml", []byte("hardware: "+c.hardware+"\n"+ok500))
		if err != nil {
			t.Fatalf("hardware: %s: %v", c.hardware, err)
		}
		if cfg.Hardware.HoldCPUClock != c.want {
			t.Errorf("hardware: %s: hold_cpu_clock %v, want %v", c.hardware, cfg.Hardware.HoldCPUClock, c.want)
		}
		if len(cfg.Warnings) != 0 {
			t.Errorf("hardware: %s: warnings %q", c.hardware, cfg.Warnings)
		}
	}
}

// A value that is not a boolean is refused at its place; set on the virtual Pi
// under a clock rule that plays no clocks, it loads with a warning.
func TestHoldCPUClockChecked(t *testing.T) {
	_, err := Parse("x.yaml", []byte("hardware:\n  hold_cpu_clock: always\n"+ok500))
	want := `x.yaml:2:19: hardware.hold_cpu_clock: "always" is not a boolean; write true or false`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("hold_cpu_clock: always: %v, want %q", err, want)
	}
	cfg, err := Parse("x.yaml", []byte("hardware: {sim_cpu: shared, hold_cpu_clock: true}\n"+ok500))
	if err != nil {
		t.Fatal(err)
	}
	want = "hardware.hold_cpu_clock: has no effect with sim_cpu shared: only the strict rule plays the board's clocks"
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], want) {
		t.Errorf("warnings %q, want one saying %q", cfg.Warnings, want)
	}
}
