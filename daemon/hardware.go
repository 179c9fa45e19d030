package daemon

import (
	"fmt"

	"cand/bridge"
	"cand/config"
	"cand/hw/bcm2835"
	"cand/internal/mono"
)

// hardware is what both backends drive alike: the SPI0 engine and GPIO block on
// registers (real or modelled), and each controller's INT line as an event fd plus
// a level.
type hardware struct {
	spi  *bcm2835.SPI
	gpio *bcm2835.GPIO
	fds  []int // INT edge-event fds, index-aligned with cfg.Controllers
	// clk is the board's time, picked once by the backend: CLOCK_MONOTONIC on a
	// real Pi, the virtual Pi's own clock (sim/clock) on the simulator. The SPI
	// engine, the bridge and the driver read it on the owner thread.
	clk mono.Clock
	// seen is the board's time for the other threads (the bus load's sampler):
	// CLOCK_MONOTONIC on a real Pi, the time the virtual Pi's hardware has
	// reached (sim/clock Reached), which no removal of a host stall takes back.
	seen mono.Clock
}

// clock is the board's time on the owner thread (hardware.clk).
func (h *hardware) clock() mono.Clock { return h.clk }

// seenClock is the board's time on other threads (hardware.seen).
func (h *hardware) seenClock() mono.Clock { return h.seen }

// intLine is controller i's INT line: the fd the owner epolls for its edges, and
// its level through the GPIO level register.
func (h *hardware) intLine(i int, cc *config.Controller) (fd int, level bcm2835.ActiveLow) {
	return h.fds[i], h.gpio.ActiveLow(cc.IntGPIO)
}

// pinPlan is the pins the configuration gives cand: the chip selects, the INT
// inputs and the logic-analyzer outputs.
func pinPlan(cfg *config.Config) (bcm2835.PinPlan, error) {
	var plan bcm2835.PinPlan
	for i := range cfg.Controllers {
		cc := &cfg.Controllers[i]
		cs, err := chipSelect(cc)
		if err != nil {
			return plan, err
		}
		plan.ChipSelects = append(plan.ChipSelects, cs)
		plan.Interrupts = append(plan.Interrupts, cc.IntGPIO)
	}
	a := cfg.Hardware.AnalyzerPins
	for _, pin := range []int{a.Interrupt, a.SPI, a.SocketWrite} {
		if pin >= 0 {
			plan.Outputs = append(plan.Outputs, pin)
		}
	}
	return plan, nil
}

// probe returns the logic-analyzer pins' driver, or nil when none is configured.
func (h *hardware) probe(cfg *config.Config) *bridge.Probe {
	a := cfg.Hardware.AnalyzerPins
	if a.Interrupt < 0 && a.SPI < 0 && a.SocketWrite < 0 {
		return nil
	}
	return &bridge.Probe{GPIO: h.gpio, Interrupt: a.Interrupt, SPI: a.SPI, SocketWrite: a.SocketWrite}
}

// device opens the controller's chip select on SPI0.
func (h *hardware) device(cc *config.Controller) (*bcm2835.Device, error) {
	cs, err := chipSelect(cc)
	if err != nil {
		return nil, err
	}
	return h.spi.Device(bcm2835.DeviceConfig{ClockHz: cc.SPI.ClockHz, Mode: cc.SPI.Mode, CS: cs})
}

// chipSelect turns the parsed spi.chip_select into the SPI engine's form.
func chipSelect(cc *config.Controller) (bcm2835.ChipSelect, error) {
	cs := cc.SPI.ChipSelect
	if !cs.IsSet() {
		return bcm2835.ChipSelect{}, fmt.Errorf("spi.chip_select not set: use ce0, ce1 or gpioN")
	}
	if ce, native := cs.CE(); native {
		return bcm2835.ChipSelect{Native: ce, ActiveHigh: cc.SPI.CSActiveHigh}, nil
	}
	return bcm2835.ChipSelect{Native: -1, GPIO: cs.Pin(), ActiveHigh: cc.SPI.CSActiveHigh}, nil
}
