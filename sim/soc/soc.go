package soc

import (
	"fmt"

	"cand/hw/bcm2835"
	"cand/sim/clock"
)

// SoC is the virtual Pi's BCM2835-family chip: the SPI0, GPIO and System Timer
// register blocks and the wires from them to the SPI slaves and interrupt sources
// on the board.
type SoC struct {
	clk    *clock.Clock
	kind   bcm2835.SoC
	coreHz uint32
	spi    SPI0Model
	gpio   GPIOModel
	timer  SystemTimerModel
	slaves []attachedSlave
}

type attachedSlave struct {
	slave      SPISlave
	pin        int
	activeHigh bool
	active     bool
}

// New builds a SoC on host time whose core clock runs at coreClockHz. kind picks
// the GPIO flavour (pin count and pull registers; SoCUnknown behaves as BCM2835).
func New(coreClockHz uint32, kind bcm2835.SoC) *SoC { return NewOn(coreClockHz, kind, clock.New()) }

// NewOn is New on clk: every register access is a CPU access of clk (Access), so
// the time the host takes the CPU thread away is not the SoC's time.
func NewOn(coreClockHz uint32, kind bcm2835.SoC, clk *clock.Clock) *SoC {
	s := &SoC{clk: clk, kind: kind, coreHz: coreClockHz}
	s.spi.soc = s
	s.gpio.soc = s
	s.timer.soc = s
	s.gpio.n = kind.NumGPIO()
	s.gpio.reset()
	return s
}

// SPI0 returns the SPI0 register block (a bcm2835.Regs[bcm2835.SPIReg]).
func (s *SoC) SPI0() *SPI0Model { return &s.spi }

// GPIO returns the GPIO register block (a bcm2835.Regs[bcm2835.GPIOReg]).
func (s *SoC) GPIO() *GPIOModel { return &s.gpio }

// SystemTimer returns the System Timer register block (a bcm2835.Regs[bcm2835.STReg]).
func (s *SoC) SystemTimer() *SystemTimerModel { return &s.timer }

// Clock is the time base the SoC runs on.
func (s *SoC) Clock() *clock.Clock { return s.clk }

// Kind returns the SoC the model plays.
func (s *SoC) Kind() bcm2835.SoC { return s.kind }

// CoreClockHz is the current core clock.
func (s *SoC) CoreClockHz() uint32 { return s.coreHz }

// SetCoreClockHz changes the core clock, as the firmware does when it scales it:
// bytes already shifted keep their timing, later ones run at the new SCLK. Call it
// from the goroutine that accesses the registers.
func (s *SoC) SetCoreClockHz(hz uint32) {
	s.spi.advance(s.clk.ModelNow())
	s.coreHz = hz
}

// AttachSPI wires slave to the SPI0 bus (MOSI, MISO, SCLK) with its chip-select
// input on GPIO csPin, active at level activeHigh. The slave is selected while that
// pin's level (whatever drives it: SPI0's CE in ALT0, a GPIO output, a pull) is its
// active level; SetCS is called on every change, and once now with the initial state
// if it is active. Call it while building the board, before the driver runs.
func (s *SoC) AttachSPI(slave SPISlave, csPin int, activeHigh bool) error {
	if csPin < 0 || csPin >= s.gpio.n {
		return fmt.Errorf("sim/soc: chip-select GPIO%d does not exist on %v", csPin, s.kind)
	}
	s.slaves = append(s.slaves, attachedSlave{slave: slave, pin: csPin, activeHigh: activeHigh})
	s.updateCS(s.clk.ModelNow())
	return nil
}

// AttachInput drives GPIO pin from src (e.g. the MCP2515's INT output) while the
// pin is an input.
func (s *SoC) AttachInput(pin int, src PinSource) error {
	if pin < 0 || pin >= s.gpio.n {
		return fmt.Errorf("sim/soc: GPIO%d does not exist on %v", pin, s.kind)
	}
	if s.gpio.src[pin] != nil {
		return fmt.Errorf("sim/soc: GPIO%d already has an input source: one output per wire", pin)
	}
	s.gpio.src[pin] = src
	return nil
}

// updateCS recomputes every slave's chip-select input and tells the slaves whose
// state changed.
func (s *SoC) updateCS(at int64) {
	for i := range s.slaves {
		a := &s.slaves[i]
		active := s.gpio.Level(a.pin, at) == a.activeHigh
		if active != a.active {
			a.active = active
			a.slave.SetCS(active, at)
		}
	}
}

// exchange shifts one byte through every selected slave. MISO is driven only by a
// selected slave: with none the line floats and reads 0xFF; with two or more the
// drivers fight, the result (modelled as the AND of their outputs) is garbage and
// the contention is counted.
func (s *SoC) exchange(mosi byte, mode uint8, sclk uint32, at int64) byte {
	miso, n := byte(0xFF), 0
	for i := range s.slaves {
		if a := &s.slaves[i]; a.active {
			miso &= a.slave.Exchange(mosi, mode, sclk, at)
			n++
		}
	}
	if n > 1 {
		s.spi.contention.Add(1)
	}
	return miso
}

// The register blocks as the host-noise rule names their sites (clock.Site).
const (
	siteGPIO uint32 = iota + 1
	siteSPI0
	siteSystemTimer
)

// SiteName spells a register site of this SoC's blocks (clock.Site) for a
// report: the block, the register's offset, and "w" for a write.
func SiteName(site uint32) string {
	block, off, w := site>>24, (site>>1)&0xfffff, ""
	if site&1 != 0 {
		w = " w"
	}
	name := map[uint32]string{siteGPIO: "GPIO", siteSPI0: "SPI0", siteSystemTimer: "ST"}[block]
	if name == "" {
		return fmt.Sprintf("site %#x", site)
	}
	return fmt.Sprintf("%s+%#02x%s", name, off, w)
}
