package config

import "testing"

// hardware.clock_source is auto by default, takes runtime or system_timer on
// either backend, and anything else is an error naming the choices.
func TestClockSourceKey(t *testing.T) {
	for in, want := range map[string]ClockSource{
		"":                                    ClockSourceAuto,
		"hardware: {clock_source: runtime}\n": ClockSourceRuntime,
		"hardware: {clock_source: system_timer}\n":           ClockSourceSystemTimer,
		"hardware: {clock_source: auto, backend: bcm2835}\n": ClockSourceAuto,
	} {
		c, err := Parse("x.yaml", []byte(in+ok500))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if c.Hardware.ClockSource != want {
			t.Errorf("%q: clock_source %q, want %q", in, c.Hardware.ClockSource, want)
		}
	}
	_, err := Parse("x.yaml", []byte("hardware: {clock_source: system-timer}\n"+ok500))
	want := `x.yaml:1:26: hardware.clock_source: "system-timer" is not allowed (did you mean system_timer?); allowed: auto, runtime, system_timer`
	if err == nil || err.Error() != want {
		t.Fatalf("error\n%v\nwant\n%s", err, want)
	}
}
