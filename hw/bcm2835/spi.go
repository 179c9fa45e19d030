package bcm2835

import (
	"fmt"
	"time"

	"cand/internal/mono"
)

// DefaultPollBudget is how long a transfer polls before it considers sleeping: in
// the kernel's SPI path on a Pi 2 a worker thread's wake-up costs 19–25 µs
// (https://github.com/msperl/spi-bcm2835/issues/11), so waits shorter than that are
// cheaper to spin through.
const DefaultPollBudget = 20 * time.Microsecond

// Stall limits: a transfer that makes no progress for stallFactor × the wire time of
// the bytes in flight (at the lowest core clock) plus stallFloor is abandoned. The
// floor absorbs scheduler hiccups on a loaded machine; progress is re-checked after
// every wake-up, so a late poller never reports a working controller as dead. The
// floor is well above the slowest transfer measured with both cores busy (~8 ms
// under stress-ng, docs/BENCHMARKS.md): a dead SPI0 is a hardware fault, and 20 ms
// to notice it costs nothing, while a false alarm stops the daemon.
//
// Only time the transfer watched counts: a gap of more than stallAwayNs between two
// of its clock reads while it waits (far more than one poll, a status read and a
// clock read, takes) is time this thread was descheduled or asleep, not time the
// controller failed to deliver in.
const (
	stallFactor  = 16
	stallFloorNs = 20_000_000
	stallAwayNs  = 100_000
)

// SPIOptions configures the SPI0 engine.
type SPIOptions struct {
	// CoreClockHz is the highest core clock the firmware may run at; dividers are
	// sized for it so SCLK never exceeds a device's ClockHz. Required.
	CoreClockHz uint32
	// MinCoreClockHz is the lowest core clock (0: CoreClockHz). It only bounds how
	// long a transfer may take before it is declared stuck.
	MinCoreClockHz uint32
	// PollBudget is the wait a transfer spins through; a longer wait for bytes in
	// flight sleeps for the part of it beyond the wake-up latency (wait.go) and
	// polls the rest. 0 means DefaultPollBudget.
	PollBudget time.Duration
	// WakeLatency is what a Sleep is taken to overshoot by (its wake-up cost,
	// margin included). 0 means measure it now with a few short sleeps
	// (calibrateWake, wait.go).
	WakeLatency time.Duration
	// Sleep is called for the long waits. nil means nanosleep(2) on Linux, which
	// blocks the (locked) owner thread for about the time asked; time.Sleep goes
	// through the runtime's timers, whose sub-millisecond sleeps take ~1 ms.
	Sleep func(time.Duration)
	// Clock is the board's time, which the poll budget, stall detection and
	// Timing are read in. nil means CLOCK_MONOTONIC (internal/mono), a real Pi's.
	Clock mono.Clock
}

// SPI is the SPI0 controller (BCM2835 ARM Peripherals §10) driven in polled mode.
// It is owned by one thread: neither SPI nor its Devices may be used concurrently.
type SPI struct {
	regs      Regs[SPIReg]
	gpio      *GPIO
	coreHz    uint32
	minCoreHz uint32
	budgetNs  int64
	wakeNs    int64 // the wake-up latency sleepPart assumes
	sleep     func(time.Duration)
	clock     mono.Clock

	// cspol holds CSPOL0/CSPOL1 for every native device: each CS write carries all
	// of them, so an unselected CE stays at its own device's inactive level.
	cspol   CS
	claimed [2]int8 // per native CE: 0 unclaimed, 1 active-low, 2 active-high

	// What the engine last left in the block, so that a transfer writes only
	// what differs: clean is true once a CS write cleared both FIFOs with TA off
	// (every transfer's last write does, as the kernel's spi-bcm2835
	// bcm2835_spi_reset_hw does), and clkSet/clk is the CLK register last
	// written. Nothing else writes SPI0 while cand owns it (detect.go refuses a
	// bound spi-bcm2835).
	clean  bool
	clkSet bool
	clk    uint32
}

// NewSPI drives the SPI0 block at regs. gpio is needed for GPIO chip selects (it
// may be nil if every device uses a native CE).
func NewSPI(regs Regs[SPIReg], gpio *GPIO, opt SPIOptions) *SPI {
	s := &SPI{
		regs:      regs,
		gpio:      gpio,
		coreHz:    opt.CoreClockHz,
		minCoreHz: opt.MinCoreClockHz,
		budgetNs:  int64(opt.PollBudget),
		sleep:     opt.Sleep,
		clock:     opt.Clock,
	}
	if s.minCoreHz == 0 || s.minCoreHz > s.coreHz {
		s.minCoreHz = s.coreHz
	}
	if s.budgetNs <= 0 {
		s.budgetNs = int64(DefaultPollBudget)
	}
	if s.sleep == nil {
		s.sleep = threadSleep
	}
	s.wakeNs = int64(opt.WakeLatency)
	if s.wakeNs <= 0 {
		s.wakeNs = calibrateWake(s.sleep, s.now)
	}
	return s
}

// now is the clock every transfer's timing and waits are read on.
func (s *SPI) now() int64 { return s.clock.Now() }

// WakeLatency is the wake-up latency the engine's waits assume (SPIOptions.WakeLatency,
// or what was measured when it was built).
func (s *SPI) WakeLatency() time.Duration { return time.Duration(s.wakeNs) }

// CoreClockHz returns the core clock dividers are sized for.
func (s *SPI) CoreClockHz() uint32 { return s.coreHz }

// ChipSelect says how a device is selected.
type ChipSelect struct {
	// Native is the SPI0 chip enable: 0 = CE0 (GPIO8), 1 = CE1 (GPIO7), -1 = a GPIO.
	// Native CEs need their pins in ALT0 (pin setup does that, not this package).
	Native int
	// GPIO is the chip-select pin when Native is -1. Device makes it an output
	// driven inactive.
	GPIO int
	// ActiveHigh selects an active-high chip select (the usual one is active-low).
	ActiveHigh bool
}

// DeviceConfig is one device on SPI0.
type DeviceConfig struct {
	ClockHz uint32 // maximum SCLK; the actual one is ≤ this at the highest core clock
	Mode    uint8  // SPI mode 0..3 (CPOL<<1 | CPHA)
	CS      ChipSelect
}

// Device is one chip select on SPI0. Its Transfer is not safe for concurrent use:
// one owner thread per bus calls it.
type Device struct {
	spi       *SPI
	cfg       DeviceConfig
	mode      CS  // CPOL|CPHA bits of CS
	csField   CS  // CS[1:0]
	gpioCS    int // -1 for a native CE
	cdiv      uint32
	sclkHz    uint32
	byteNs    int64 // wire time of one byte at the highest core clock
	slowByte  int64 // at the lowest core clock
	activeLvl bool
}

// Device adds a device on SPI0. For a native CE it records the CE's polarity (two
// devices on one CE must agree) and writes CS so that CE idles inactive at once; for
// a GPIO chip select it drives the pin inactive and makes it an output.
func (s *SPI) Device(cfg DeviceConfig) (*Device, error) {
	if s.coreHz == 0 {
		return nil, fmt.Errorf("bcm2835: SPI0 has no core clock: set SPIOptions.CoreClockHz to the highest core clock of the board")
	}
	if cfg.Mode > 3 {
		return nil, fmt.Errorf("bcm2835: SPI mode %d is not 0..3", cfg.Mode)
	}
	if cfg.ClockHz == 0 {
		return nil, fmt.Errorf("bcm2835: SPI0 device clock is 0 Hz: set the device's maximum SCLK (MCP2515: 10 MHz)")
	}
	d := &Device{spi: s, cfg: cfg, gpioCS: -1, activeLvl: cfg.CS.ActiveHigh}
	if cfg.Mode&2 != 0 {
		d.mode |= CSCPOL
	}
	if cfg.Mode&1 != 0 {
		d.mode |= CSCPHA
	}
	d.cdiv, d.sclkHz = Divider(s.coreHz, cfg.ClockHz)
	d.byteNs = WireNs(s.coreHz, d.cdiv, 1)
	d.slowByte = WireNs(s.minCoreHz, d.cdiv, 1)

	switch n := cfg.CS.Native; n {
	case 0, 1:
		pol := int8(1)
		if cfg.CS.ActiveHigh {
			pol = 2
		}
		if c := s.claimed[n]; c != 0 && c != pol {
			return nil, fmt.Errorf("bcm2835: SPI0 CE%d already has a device with the opposite chip-select polarity: one CE line has one polarity", n)
		}
		s.claimed[n] = pol
		bit := CSCSPOLn(n)
		if cfg.CS.ActiveHigh {
			s.cspol |= bit
		} else {
			s.cspol &^= bit
		}
		d.csField = CSCS(n)
		// TA=0: every native CE goes to its inactive level now.
		StoreCS(s.regs, s.cspol|CSCSNone)
	case -1:
		if s.gpio == nil {
			return nil, fmt.Errorf("bcm2835: SPI0 device with GPIO%d chip select but no GPIO block: pass the GPIO to NewSPI", cfg.CS.GPIO)
		}
		if !s.gpio.Valid(cfg.CS.GPIO) {
			return nil, fmt.Errorf("bcm2835: chip-select GPIO%d does not exist on %v", cfg.CS.GPIO, s.gpio.SoC())
		}
		d.gpioCS = cfg.CS.GPIO
		d.csField = CSCSNone
		s.gpio.Write(d.gpioCS, !cfg.CS.ActiveHigh) // latch the inactive level first: no glitch
		if err := s.gpio.SetFunction(d.gpioCS, FselOutput); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("bcm2835: SPI0 chip select %d is not 0 (CE0), 1 (CE1) or -1 (GPIO)", n)
	}
	return d, nil
}

// Config returns the device's configuration.
func (d *Device) Config() DeviceConfig { return d.cfg }

// CDIV is the CLK register value the device's transfers use.
func (d *Device) CDIV() uint32 { return d.cdiv }

// SCLKHz is the device's SCLK at the highest core clock.
func (d *Device) SCLKHz() uint32 { return d.sclkHz }

// SCLKRange is the device's SCLK over the core clock range the SPI was given.
func (d *Device) SCLKRange() (lo, hi uint32) {
	return SCLKRange(d.spi.minCoreHz, d.spi.coreHz, d.cdiv)
}

// ByteNs is the wire time of one byte (9 SCLK periods) at the highest core clock.
func (d *Device) ByteNs() int64 { return d.byteNs }
