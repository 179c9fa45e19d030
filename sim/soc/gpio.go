package soc

import (
	"cand/hw/bcm2835"
	"cand/hw/pinout"
	"cand/sim/clock"
)

// unimplemented is what reads of registers the block does not have return on the
// BCM2835-2837 (ASCII "gpio"; go-rpio relies on it to tell the BCM2711 apart).
const unimplemented = 0x6770696f

// GPIOModel is the GPIO block at register level.
//
//   - GPFSEL0-5 hold the function of each pin.
//   - GPSET/GPCLR set and clear the output latch whatever the function (as on
//     silicon: a latch written while the pin is an input is driven once it becomes
//     an output).
//   - GPLEV reads, per pin: an output its latch; GPIO7/8 in ALT0 SPI0's CE1/CE0
//     level; GPIO11 in ALT0 the SCLK idle level (CPOL); an input its attached
//     PinSource, else its pull (up reads high, down or none low); any other
//     function low.
//   - Pulls: BCM2835-2837 latch GPPUD into the pins whose GPPUDCLK bit goes 0→1;
//     the BCM2711 has readable GPIO_PUP_PDN_CNTRL registers instead (and ignores
//     GPPUD). Reset pulls follow the BCM2835 table for bank 0 (GPIO0-8 up, 9-27
//     down); other pins start with none.
//   - Event-detect registers are stored (GPEDS write-1-to-clear) but never set:
//     the kernel's GPIO character device owns edge detection; see EdgeLine.
//   - Registers the SoC does not have read "gpio" (0x6770696f).
type GPIOModel struct {
	soc *SoC
	n   int

	fsel     [6]uint32
	out      [2]uint32
	pull     [pinout.NumGPIOBCM2711]bcm2835.Pull
	gppud    uint32
	gppudclk [2]uint32
	event    [(bcm2835.GPPUD - bcm2835.GPEDS0) / 4]uint32 // GPEDS0 .. GPAFEN1
	src      [pinout.NumGPIOBCM2711]PinSource
}

var _ bcm2835.Regs[bcm2835.GPIOReg] = (*GPIOModel)(nil)

func (g *GPIOModel) reset() {
	for p := 0; p <= 8; p++ {
		g.pull[p] = bcm2835.PullUp
	}
	for p := 9; p <= 27; p++ {
		g.pull[p] = bcm2835.PullDown
	}
}

// Function is the pin's function select.
func (g *GPIOModel) Function(pin int) bcm2835.Fsel {
	return bcm2835.Fsel(g.fsel[pin/10] >> (uint32(pin%10) * 3) & 7)
}

// PullOf is the pin's pull as the model latched it.
func (g *GPIOModel) PullOf(pin int) bcm2835.Pull { return g.pull[pin] }

// Level is the pin's level at time at.
func (g *GPIOModel) Level(pin int, at int64) bool {
	if pin < 0 || pin >= g.n {
		return false
	}
	switch f := g.Function(pin); {
	case f == bcm2835.FselOutput:
		return g.out[pin>>5]>>(pin&31)&1 != 0
	case f == bcm2835.FselAlt0:
		switch pin {
		case pinout.PinCE0:
			return g.soc.spi.ceLevel(0)
		case pinout.PinCE1:
			return g.soc.spi.ceLevel(1)
		case pinout.PinSCLK:
			return g.soc.spi.cs&bcm2835.CSCPOL != 0
		}
		return false
	case f == bcm2835.FselInput:
		if s := g.src[pin]; s != nil {
			return s.Level(at)
		}
		return g.pull[pin] == bcm2835.PullUp
	}
	return false
}

func (g *GPIOModel) levels(bank int, at int64) uint32 {
	var v uint32
	for i := range 32 {
		if g.Level(bank*32+i, at) {
			v |= 1 << i
		}
	}
	return v
}

func (g *GPIOModel) Load(off bcm2835.GPIOReg) uint32 {
	now := g.soc.clk.AccessAt(clock.Site(siteGPIO, uint32(off), false))
	g.soc.spi.advance(now)
	switch {
	case off <= bcm2835.GPFSEL0+20:
		return g.fsel[off/4]
	case off == bcm2835.GPLEV0 || off == bcm2835.GPLEV1:
		return g.levels(int(off-bcm2835.GPLEV0)/4, now)
	case off >= bcm2835.GPSET0 && off <= bcm2835.GPCLR1:
		return 0 // write-only
	case off >= bcm2835.GPEDS0 && off < bcm2835.GPPUD:
		return g.event[(off-bcm2835.GPEDS0)/4]
	case g.soc.kind.PullRegisters() && off >= bcm2835.GPIOPUPPDN0 && off < bcm2835.GPIOPUPPDN0+16:
		return g.pupPdn(int(off-bcm2835.GPIOPUPPDN0) / 4)
	case !g.soc.kind.PullRegisters() && off == bcm2835.GPPUD:
		return g.gppud
	case !g.soc.kind.PullRegisters() && (off == bcm2835.GPPUDCLK0 || off == bcm2835.GPPUDCLK1):
		return g.gppudclk[(off-bcm2835.GPPUDCLK0)/4]
	}
	return unimplemented
}

func (g *GPIOModel) pupPdn(reg int) uint32 {
	var v uint32
	for i := range 16 {
		p := reg*16 + i
		if p >= g.n {
			break
		}
		switch g.pull[p] {
		case bcm2835.PullUp:
			v |= 0b01 << (2 * i)
		case bcm2835.PullDown:
			v |= 0b10 << (2 * i)
		}
	}
	return v
}

func (g *GPIOModel) Store(off bcm2835.GPIOReg, v uint32) {
	now := g.soc.clk.AccessAt(clock.Site(siteGPIO, uint32(off), true))
	g.soc.spi.advance(now) // bytes before a chip-select change go to the old selection
	switch {
	case off <= bcm2835.GPFSEL0+20:
		g.fsel[off/4] = v & 0x3FFFFFFF
	case off == bcm2835.GPSET0 || off == bcm2835.GPSET1:
		g.out[(off-bcm2835.GPSET0)/4] |= v
	case off == bcm2835.GPCLR0 || off == bcm2835.GPCLR1:
		g.out[(off-bcm2835.GPCLR0)/4] &^= v
	case off == bcm2835.GPEDS0 || off == bcm2835.GPEDS0+4:
		g.event[(off-bcm2835.GPEDS0)/4] &^= v
	case off >= bcm2835.GPEDS0 && off < bcm2835.GPPUD:
		g.event[(off-bcm2835.GPEDS0)/4] = v
	case g.soc.kind.PullRegisters() && off >= bcm2835.GPIOPUPPDN0 && off < bcm2835.GPIOPUPPDN0+16:
		reg := int(off-bcm2835.GPIOPUPPDN0) / 4
		for i := range 16 {
			p := reg*16 + i
			if p >= g.n {
				break
			}
			switch v >> (2 * i) & 3 {
			case 0b01:
				g.pull[p] = bcm2835.PullUp
			case 0b10:
				g.pull[p] = bcm2835.PullDown
			default:
				g.pull[p] = bcm2835.PullOff
			}
		}
	case !g.soc.kind.PullRegisters() && off == bcm2835.GPPUD:
		g.gppud = v & 3
	case !g.soc.kind.PullRegisters() && (off == bcm2835.GPPUDCLK0 || off == bcm2835.GPPUDCLK1):
		b := (off - bcm2835.GPPUDCLK0) / 4
		rising := v &^ g.gppudclk[b]
		g.gppudclk[b] = v
		for i := range 32 {
			if p := int(b)*32 + i; rising&(1<<i) != 0 && p < g.n {
				g.pull[p] = bcm2835.Pull(g.gppud) // 3 is reserved: kept as written
			}
		}
	default:
		return
	}
	g.soc.updateCS(now)
}
