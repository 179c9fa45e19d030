package bcm2835

import (
	"errors"
	"fmt"

	"cand/hw/pinout"
)

// PinPlan is every GPIO cand drives on SPI0's bus, configured once at start.
type PinPlan struct {
	// ChipSelects are the chip selects of the devices on SPI0 (the CS of each
	// DeviceConfig). A native CE puts its pin (CE0 GPIO8, CE1 GPIO7) in ALT0; a GPIO
	// chip select becomes an output driven to its inactive level first.
	ChipSelects []ChipSelect
	// Interrupts are the devices' interrupt outputs (the MCP2515's INT, active low):
	// inputs with a pull-up, so an absent or unpowered chip reads as idle. Their edges
	// belong to the GPIO character device: SetupPins never touches GPEDS/GPREN/GPFEN/
	// GPHEN/GPLEN/GPAREN/GPAFEN.
	Interrupts []int
	// Outputs are plain outputs started low (logic-analyzer marks).
	Outputs []int
}

// pinStep is one pin's configuration.
type pinStep struct {
	pin   int
	role  string
	fsel  Fsel
	pull  bool // set PullUp
	drive bool // latch level before switching to output
	level bool
}

// Saved is the state of every pin SetupPins touched, for Restore.
type Saved struct {
	g    *GPIO
	pins []savedPin // in the order they were changed
}

type savedPin struct {
	pin      int
	fsel     Fsel
	level    bool // output latch, when fsel was FselOutput
	pull     Pull
	pullRead bool // the SoC could read the pull back (BCM2711)
	pullSet  bool // SetupPins changed the pull
}

// SetupPins configures the pins of plan once, at start, before the SPI devices
// are created (the SPI engine's Device then finds its chip-select pin ready), and
// returns what it changed so Restore can put it back at exit. Order: GPIO chip
// selects (latched inactive, then output), native CEs and MISO/MOSI/SCLK to ALT0,
// interrupt inputs with pull-up, plain outputs low. The plan is checked in full
// before any register is written.
//
// A native CE in ALT0 idles at the level CS.CSPOLn gives it (inactive for an
// active-low device after reset); for an active-high device on a native CE the line
// reads active until Device writes CSPOLn.
//
// Pulls: BCM2711 pulls are read before and restored; the BCM2835/6/7's GPPUD
// mechanism cannot be read, so a pull-up SetupPins set there stays after Restore.
func SetupPins(g *GPIO, plan PinPlan) (*Saved, error) {
	steps, err := planSteps(g, plan)
	if err != nil {
		return nil, err
	}
	s := &Saved{g: g}
	for _, st := range steps {
		sp := savedPin{pin: st.pin, fsel: g.Function(st.pin)}
		if sp.fsel == FselOutput {
			sp.level = g.Level(st.pin)
		}
		if st.pull {
			if p, err := g.Pull(st.pin); err == nil {
				sp.pull, sp.pullRead = p, true
			}
		}
		s.pins = append(s.pins, sp)

		if st.drive {
			g.Write(st.pin, st.level)
		}
		err := g.SetFunction(st.pin, st.fsel)
		if err == nil && st.pull {
			s.pins[len(s.pins)-1].pullSet = true
			err = g.SetPull(st.pin, PullUp)
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("bcm2835: setting up GPIO%d (%s): %w", st.pin, st.role, err), s.Restore())
		}
	}
	return s, nil
}

// planSteps validates plan against the GPIO block and orders its steps. Every pin
// has one role; describing the same chip select twice is allowed (two devices
// may share a native CE).
func planSteps(g *GPIO, plan PinPlan) ([]pinStep, error) {
	// The SPI0 data pins are always in ALT0; they are claimed first so a
	// conflict names them as the owner.
	data := []pinStep{
		{pin: pinout.PinMISO, role: "SPI0 MISO", fsel: FselAlt0},
		{pin: pinout.PinMOSI, role: "SPI0 MOSI", fsel: FselAlt0},
		{pin: pinout.PinSCLK, role: "SPI0 SCLK", fsel: FselAlt0},
	}
	roles := map[int]string{}
	for _, d := range data {
		roles[d.pin] = d.role
	}
	// claim records pin's role; again is true when the pin already has this role.
	claim := func(pin int, role string) (again bool, err error) {
		if !g.Valid(pin) {
			return false, fmt.Errorf("bcm2835: GPIO%d (%s) does not exist on %v (GPIO0..%d): fix the pin number in the configuration",
				pin, role, g.SoC(), g.NumPins()-1)
		}
		if prev, ok := roles[pin]; ok {
			if prev == role {
				return true, nil
			}
			return false, fmt.Errorf("bcm2835: GPIO%d cannot be both %s and %s: give each its own pin in the configuration",
				pin, prev, role)
		}
		roles[pin] = role
		return false, nil
	}
	var gpioCS, native, rest []pinStep
	add := func(to *[]pinStep, st pinStep) error {
		again, err := claim(st.pin, st.role)
		if err == nil && !again {
			*to = append(*to, st)
		}
		return err
	}
	for _, cs := range plan.ChipSelects {
		var err error
		switch cs.Native {
		case 0:
			err = add(&native, pinStep{pin: pinout.PinCE0, role: "SPI0 CE0", fsel: FselAlt0})
		case 1:
			err = add(&native, pinStep{pin: pinout.PinCE1, role: "SPI0 CE1", fsel: FselAlt0})
		case -1:
			role := "an active-low chip select"
			if cs.ActiveHigh {
				role = "an active-high chip select"
			}
			err = add(&gpioCS, pinStep{pin: cs.GPIO, role: role, fsel: FselOutput, drive: true, level: !cs.ActiveHigh})
		default:
			err = fmt.Errorf("bcm2835: SPI0 chip select %d is not 0 (CE0), 1 (CE1) or -1 (a GPIO)", cs.Native)
		}
		if err != nil {
			return nil, err
		}
	}
	for _, p := range plan.Interrupts {
		if err := add(&rest, pinStep{pin: p, role: "an interrupt input", fsel: FselInput, pull: true}); err != nil {
			return nil, err
		}
	}
	for _, p := range plan.Outputs {
		if err := add(&rest, pinStep{pin: p, role: "an output", fsel: FselOutput, drive: true}); err != nil {
			return nil, err
		}
	}
	steps := append(gpioCS, native...)
	steps = append(steps, data...)
	return append(steps, rest...), nil
}

// Restore puts every pin SetupPins changed back as it found it, in reverse order:
// the output latch of a pin that was an output, then its function, then (BCM2711)
// its pull. Calling it again does nothing.
func (s *Saved) Restore() error {
	if s == nil {
		return nil
	}
	var errs []error
	for i := len(s.pins) - 1; i >= 0; i-- {
		p := s.pins[i]
		if p.fsel == FselOutput {
			s.g.Write(p.pin, p.level)
		}
		if err := s.g.SetFunction(p.pin, p.fsel); err != nil {
			errs = append(errs, err)
		}
		if p.pullSet && p.pullRead {
			if err := s.g.SetPull(p.pin, p.pull); err != nil {
				errs = append(errs, err)
			}
		}
	}
	s.pins = nil
	return errors.Join(errs...)
}

// Pins lists the pins SetupPins changed, in order.
func (s *Saved) Pins() []int {
	out := make([]int, len(s.pins))
	for i, p := range s.pins {
		out[i] = p.pin
	}
	return out
}
