package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"cand/bridge"
	"cand/config"
	"cand/hw/bcm2835"
	"cand/internal/mono"
	"cand/mcp2515"
)

// hardware is what both backends drive alike: the SPI0 engine and GPIO block on
// registers (real or modelled), and each controller's INT line as an event fd plus
// a level.
type hardware struct {
	spi  *bcm2835.SPI
	gpio *bcm2835.GPIO
	fds  []int // INT edge-event fds, index-aligned with cfg.Controllers
	// clk is the board's time, picked once by the backend: CLOCK_MONOTONIC on a
	// real Pi, the virtual Pi's own clock (sim/clock) on the simulator; read
	// from the runtime's clock, or from the System Timer where that is a system
	// call (src). The SPI engine, the bridge and the driver read it on the owner
	// thread.
	clk mono.Clock
	// seen is the board's time for the other threads (the bus load's sampler):
	// CLOCK_MONOTONIC on a real Pi (through the System Timer where clk reads
	// it), the time the virtual Pi's hardware has
	// reached (sim/clock Reached), which no removal of a host stall takes back.
	seen mono.Clock
	// src is the clock clk reads, and why.
	src clockSource
	// timer is clk when it reads the System Timer (nil otherwise), and tie
	// samples the System Timer against CLOCK_MONOTONIC (the board's clock on the
	// virtual Pi) for keepTied.
	timer *mono.CounterClock
	tie   func() (mono.Sample, error)
}

// clockSource is the clock the board's time is read from (hardware.clk), and why.
type clockSource struct {
	name   config.ClockSource // runtime or system_timer
	reason string
	// doubt: the detection's timing contradicts what the kernel's files said.
	doubt bool
}

// chooseClock picks the clock for hardware.clock_source setting, given v,
// whether reading the runtime's clock is a system call here: the System Timer
// where it is (auto), or as the setting says.
func chooseClock(setting config.ClockSource, v mono.Verdict) clockSource {
	src := clockSource{name: config.ClockSourceRuntime, doubt: v.Disagrees}
	switch {
	case setting == config.ClockSourceSystemTimer:
		src.name, src.reason = config.ClockSourceSystemTimer, "hardware.clock_source: system_timer"
	case setting == config.ClockSourceRuntime:
		src.reason = "hardware.clock_source: runtime"
	case v.Syscall:
		src.name, src.reason = config.ClockSourceSystemTimer, "reading the runtime's clock is a system call here"
	default:
		src.reason = "reading the runtime's clock is no system call here"
	}
	if v.Reason != "" {
		src.reason += ": " + v.Reason
	}
	return src
}

// tieInterval is how often keepTied ties the System Timer clock to
// CLOCK_MONOTONIC again. Their rates differ (the crystal's tolerance, and NTP's
// frequency correction of CLOCK_MONOTONIC, up to ±500 ppm: MAXFREQ in
// include/linux/timex.h); each tie measures the difference, so what is left
// between ties is its change within one interval (docs/clock-source.md).
const tieInterval = time.Second

var _ mono.Counter = (*bcm2835.SystemTimer)(nil)

// useSystemTimer makes clk the System Timer clock on counter, tied at first by
// sample (which keepTied calls again, off the frame path).
func (h *hardware) useSystemTimer(counter mono.Counter, sample func() (mono.Sample, error)) error {
	s, err := sample()
	if err != nil {
		return fmt.Errorf("System Timer clock: %w: is the System Timer mapped at the peripheral base + 0x3000? "+
			"(hardware.clock_source: runtime reads the kernel's clock instead)", err)
	}
	k, err := mono.NewCounterClock(counter, bcm2835.SystemTimerHz, s)
	if err != nil {
		return err
	}
	h.timer, h.tie, h.clk = k, sample, k.Clock()
	return nil
}

// logClock says once which clock the board's time is read from, and why.
func (h *hardware) logClock(log *slog.Logger) {
	args := []any{"source", string(h.src.name), "why", h.src.reason}
	if h.timer != nil {
		args = append(args, "resolution", "1us", "tie_every", tieInterval.String())
	}
	if h.src.doubt {
		log.Warn("clock source chosen from the kernel's files, which the timing contradicts: set hardware.clock_source to the other one if latencies look wrong", args...)
		return
	}
	log.Info("clock source", args...)
}

// keepTied ties the System Timer clock again every tieInterval until ctx is
// done (nothing without one). A failed sample keeps the last tie and is logged
// once until a sample succeeds again; a restart of the conversion is logged.
func (h *hardware) keepTied(ctx context.Context, log *slog.Logger) {
	h.keepTiedEvery(ctx, log, tieInterval)
}

func (h *hardware) keepTiedEvery(ctx context.Context, log *slog.Logger, every time.Duration) {
	if h.timer == nil {
		return
	}
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		failing := false
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			s, err := h.tie()
			if err != nil {
				if !failing {
					log.Error("System Timer clock: cannot tie it to CLOCK_MONOTONIC again; it keeps the last tie", "err", err)
				}
				failing = true
				continue
			}
			failing = false
			restarts := h.timer.Stats().Restarts
			h.timer.Tie(s)
			if st := h.timer.Stats(); st.Restarts != restarts {
				log.Warn("System Timer clock: a tie found the conversion too far off CLOCK_MONOTONIC to steer, and restarted it (readings may have stepped)",
					"error_ns", st.LastErrNs)
			}
		}
	}()
}

// clockSource is the clock the board's time is read from.
func (h *hardware) clockSource() clockSource { return h.src }

// clock is the board's time on the owner thread (hardware.clk).
func (h *hardware) clock() mono.Clock { return h.clk }

// seenClock is the board's time on other threads (hardware.seen).
func (h *hardware) seenClock() mono.Clock { return h.seen }

// The INT level the driver reads (mcp2515.New) is the GPIO level register's.
var _ mcp2515.IntLine = bcm2835.ActiveLow{}

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
