package config

import (
	"strings"
	"testing"
)

// hardware.sim_board and hardware.sim_cpu take one of their names, default pi3
// and strict, and sim_force_turbo a bool; on the real backend sim_board is
// ignored with a warning.
func TestSimBoardKeys(t *testing.T) {
	c, err := Parse("x.yaml", []byte("hardware: {sim_board: pi-zero, sim_cpu: dedicated, sim_force_turbo: true}\n"+ok500))
	if err != nil {
		t.Fatal(err)
	}
	if c.Hardware.SimBoard != SimBoardPiZero || c.Hardware.SimCPU != SimCPUDedicated || !c.Hardware.SimForceTurbo {
		t.Errorf("sim_board %q sim_cpu %q force_turbo %v, want pi-zero dedicated true", c.Hardware.SimBoard, c.Hardware.SimCPU, c.Hardware.SimForceTurbo)
	}
	_, err = Parse("x.yaml", []byte("hardware: {sim_board: pi5}\n"+ok500))
	if err == nil || !strings.Contains(err.Error(), "hardware.sim_board") || !strings.Contains(err.Error(), "pi-zero, pi1, pi2, pi3, pi4") {
		t.Errorf("sim_board pi5: %v, want an error naming the choices", err)
	}
	c, err = Parse("x.yaml", []byte("hardware: {backend: bcm2835, sim_board: pi4}\ncontrollers:\n  - bitrate: 500000\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) == 0 || !strings.Contains(c.Warnings[0], "hardware.sim_board: ignored: the bcm2835 backend runs on the board it finds") {
		t.Errorf("warnings %q, want sim_board ignored", c.Warnings)
	}
}

// hardware.sim_kernel_cost is board (the default) or user_factor; any other value
// is refused with the key and the choices; on the real backend it is ignored with
// a warning.
func TestSimKernelCostKey(t *testing.T) {
	c, err := Parse("x.yaml", []byte(ok500))
	if err != nil {
		t.Fatal(err)
	}
	if c.Hardware.SimKernelCost != SimKernelCostBoard {
		t.Errorf("default sim_kernel_cost %q, want board", c.Hardware.SimKernelCost)
	}
	c, err = Parse("x.yaml", []byte("hardware: {sim_kernel_cost: user_factor}\n"+ok500))
	if err != nil {
		t.Fatal(err)
	}
	if c.Hardware.SimKernelCost != SimKernelCostUserFactor {
		t.Errorf("sim_kernel_cost %q, want user_factor", c.Hardware.SimKernelCost)
	}
	_, err = Parse("x.yaml", []byte("hardware: {sim_kernel_cost: host}\n"+ok500))
	if err == nil || !strings.Contains(err.Error(), `hardware.sim_kernel_cost: "host" is not allowed; allowed: board, user_factor`) {
		t.Errorf("sim_kernel_cost host: %v, want an error naming the key and the choices", err)
	}
	c, err = Parse("x.yaml", []byte("hardware: {backend: bcm2835, sim_kernel_cost: board}\ncontrollers:\n  - bitrate: 500000\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) == 0 || !strings.Contains(c.Warnings[0], "hardware.sim_kernel_cost: ignored: the bcm2835 backend runs on the board it finds") {
		t.Errorf("warnings %q, want sim_kernel_cost ignored", c.Warnings)
	}
}
