package config

import (
	"strings"
	"testing"
	"time"
)

// hardware.sim_stall_bus_after takes a duration (default 0: never, negative
// refused) and controllers[].sim.chip_absent a bool (default false); on the real
// backend both are ignored with a warning.
func TestSimFaultKeys(t *testing.T) {
	c, err := Parse("x.yaml", []byte("hardware: {sim_stall_bus_after: 10s}\ncontrollers:\n  - bitrate: 500000\n    sim: {chip_absent: true}\n  - bitrate: 500000\n    spi: {chip_select: ce1}\n    int_gpio: 24\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Hardware.SimStallBusAfter.D(); got != 10*time.Second {
		t.Errorf("sim_stall_bus_after %v, want 10s", got)
	}
	if !c.Controllers[0].Sim.ChipAbsent || c.Controllers[1].Sim.ChipAbsent {
		t.Errorf("chip_absent %v, %v; want true, false", c.Controllers[0].Sim.ChipAbsent, c.Controllers[1].Sim.ChipAbsent)
	}
	c, err = Parse("x.yaml", []byte(ok500))
	if err != nil {
		t.Fatal(err)
	}
	if c.Hardware.SimStallBusAfter != 0 || c.Controllers[0].Sim.ChipAbsent {
		t.Errorf("defaults: sim_stall_bus_after %v, chip_absent %v; want 0, false", c.Hardware.SimStallBusAfter.D(), c.Controllers[0].Sim.ChipAbsent)
	}
	_, err = Parse("x.yaml", []byte("hardware: {sim_stall_bus_after: -1s}\n"+ok500))
	if err == nil || !strings.Contains(err.Error(), "hardware.sim_stall_bus_after: -1s is not allowed: must not be negative; 0 means never") {
		t.Errorf("sim_stall_bus_after -1s: %v, want an error naming the key and the fix", err)
	}
	c, err = Parse("x.yaml", []byte("hardware: {backend: bcm2835, sim_stall_bus_after: 1s}\ncontrollers:\n  - bitrate: 500000\n    sim: {chip_absent: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"hardware.sim_stall_bus_after: ignored: the bcm2835 backend runs on the board it finds",
		"controllers[0].sim.chip_absent: ignored: the bcm2835 backend talks to the chip that is fitted",
	}
	all := strings.Join(c.Warnings, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("warnings %q, want one containing %q", c.Warnings, w)
		}
	}
}
