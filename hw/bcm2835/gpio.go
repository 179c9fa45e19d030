package bcm2835

import (
	"fmt"

	"cand/internal/mono"
)

// Pull is a GPIO pull resistor setting. The values are the BCM2835 GPPUD encoding;
// the BCM2711 registers use another one, translated here.
type Pull uint8

const (
	PullOff  Pull = 0
	PullDown Pull = 1
	PullUp   Pull = 2
)

func (p Pull) String() string {
	switch p {
	case PullOff:
		return "off"
	case PullDown:
		return "down"
	case PullUp:
		return "up"
	}
	return "invalid"
}

// BCM2711 GPIO_PUP_PDN_CNTRL field values (2 bits per pin).
const (
	pupPdnNone = 0b00
	pupPdnUp   = 0b01
	pupPdnDown = 0b10
)

// pullSettleNs is the wait between the steps of the GPPUD/GPPUDCLK sequence. The
// datasheet asks for 150 cycles; the bcm2835 C library waits 10 µs, which covers
// every core clock. SetPull is configuration, not a hot path.
const pullSettleNs = 10_000

// GPIO is the GPIO register block (BCM2835 ARM Peripherals §6). Set, Clear, Write
// and Level are one register access each: no read-modify-write, no lock, no
// allocation, so they are safe to call from the owner thread's hot path.
// SetFunction and SetPull read-modify-write shared registers: call them while
// configuring, from one goroutine, before the hot path runs (the kernel's pinctrl
// may also write GPFSEL; do not configure lines the kernel is using).
type GPIO struct {
	r   Regs[GPIOReg]
	soc SoC
	n   int
}

// NewGPIO drives the GPIO block at r for the given SoC (which selects the pull
// mechanism and the pin count; SoCUnknown is treated as BCM2835).
func NewGPIO(r Regs[GPIOReg], soc SoC) *GPIO {
	return &GPIO{r: r, soc: soc, n: soc.NumGPIO()}
}

// SoC returns the SoC the block belongs to.
func (g *GPIO) SoC() SoC { return g.soc }

// NumPins is the number of GPIO lines (54 or 58).
func (g *GPIO) NumPins() int { return g.n }

// Valid reports whether pin is a GPIO line of this SoC.
func (g *GPIO) Valid(pin int) bool { return pin >= 0 && pin < g.n }

func (g *GPIO) check(pin int) error {
	if !g.Valid(pin) {
		return fmt.Errorf("bcm2835: GPIO%d does not exist on %v (0..%d): fix the pin number in the configuration", pin, g.soc, g.n-1)
	}
	return nil
}

// SetFunction sets the pin's function select (FselInput, FselOutput, FselAlt0..5).
func (g *GPIO) SetFunction(pin int, fsel Fsel) error {
	if err := g.check(pin); err != nil {
		return err
	}
	if fsel > FselMask {
		return fmt.Errorf("bcm2835: function select %#b for GPIO%d is not a 3-bit value", fsel, pin)
	}
	off, sh := GPFSELn(pin), FselShift(pin)
	v := g.r.Load(off)
	g.r.Store(off, v&^(FselMask<<sh)|uint32(fsel)<<sh)
	return nil
}

// Function returns the pin's function select (FselInput for an invalid pin).
func (g *GPIO) Function(pin int) Fsel {
	if !g.Valid(pin) {
		return FselInput
	}
	return Fsel(g.r.Load(GPFSELn(pin)) >> FselShift(pin) & FselMask)
}

// Set drives the pin's output latch high (GPSETn); one store.
func (g *GPIO) Set(pin int) { g.r.Store(GPSETn(pin), PinBit(pin)) }

// Clear drives the pin's output latch low (GPCLRn); one store.
func (g *GPIO) Clear(pin int) { g.r.Store(GPCLRn(pin), PinBit(pin)) }

// Write drives the pin high or low; one store.
func (g *GPIO) Write(pin int, high bool) {
	off := GPCLRn(pin)
	if high {
		off = GPSETn(pin)
	}
	g.r.Store(off, PinBit(pin))
}

// Level reads the pin's level (GPLEVn); one load.
func (g *GPIO) Level(pin int) bool { return g.r.Load(GPLEVn(pin))&PinBit(pin) != 0 }

// SetPull sets the pin's pull resistor. On BCM2835/6/7 it runs the GPPUD/GPPUDCLK
// sequence with the datasheet's settling waits (tens of µs, spinning); on BCM2711 it
// read-modify-writes GPIO_PUP_PDN_CNTRL.
func (g *GPIO) SetPull(pin int, p Pull) error {
	if err := g.check(pin); err != nil {
		return err
	}
	if p > PullUp {
		return fmt.Errorf("bcm2835: pull %d for GPIO%d is not off, down or up", p, pin)
	}
	if g.soc.PullRegisters() {
		off, sh := GPIOPUPPDNn(pin), PupPdnShift(pin)
		f := uint32(pupPdnNone)
		switch p {
		case PullUp:
			f = pupPdnUp
		case PullDown:
			f = pupPdnDown
		}
		v := g.r.Load(off)
		g.r.Store(off, v&^(PupPdnMask<<sh)|f<<sh)
		return nil
	}
	g.r.Store(GPPUD, uint32(p))
	settle()
	g.r.Store(GPPUDCLKn(pin), PinBit(pin))
	settle()
	g.r.Store(GPPUD, 0)
	g.r.Store(GPPUDCLKn(pin), 0)
	return nil
}

// Pull reads the pin's pull resistor back. Only BCM2711 can: the GPPUD mechanism
// of the older SoCs is write-only.
func (g *GPIO) Pull(pin int) (Pull, error) {
	if err := g.check(pin); err != nil {
		return PullOff, err
	}
	if !g.soc.PullRegisters() {
		return PullOff, fmt.Errorf("bcm2835: %v cannot read back GPIO%d's pull (GPPUD is write-only): keep the value you set", g.soc, pin)
	}
	switch g.r.Load(GPIOPUPPDNn(pin)) >> PupPdnShift(pin) & PupPdnMask {
	case pupPdnUp:
		return PullUp, nil
	case pupPdnDown:
		return PullDown, nil
	}
	return PullOff, nil
}

func settle() {
	end := mono.Now() + pullSettleNs
	for mono.Now() < end {
	}
}
