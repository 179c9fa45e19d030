package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"

	"golang.org/x/sys/unix"

	"cand/bridge"
	"cand/config"
	"cand/hw/bcm2835"
	"cand/hw/gpio"
	"cand/internal/mono"
	"cand/metrics"
)

// bcm2835Backend is a real Pi: SPI0 and GPIO registers mapped from /dev/mem or
// /dev/gpiomem, and the INT lines' edges from the GPIO character device.
type bcm2835Backend struct {
	*hardware
	release func()
	log     *slog.Logger
}

func openBCM2835(cfg *config.Config, log *slog.Logger) (*bcm2835Backend, error) {
	board, err := bcm2835.Detect("/")
	if err != nil {
		return nil, err
	}
	m, err := bcm2835.Map(board, "/")
	if err != nil {
		return nil, err
	}
	gr, err := bcm2835.NewMMIO[bcm2835.GPIOReg](m.GPIO)
	if err != nil {
		m.Close()
		return nil, err
	}
	sr, err := bcm2835.NewMMIO[bcm2835.SPIReg](m.SPI0)
	if err != nil {
		m.Close()
		return nil, err
	}
	g := bcm2835.NewGPIO(gr, board.SoC)
	core := cfg.Hardware.CoreClockHz
	if core == 0 {
		core = board.CoreClockMaxHz
	}
	plan, err := pinPlan(cfg)
	if err != nil {
		m.Close()
		return nil, err
	}
	saved, err := bcm2835.SetupPins(g, plan)
	if err != nil {
		m.Close()
		return nil, err
	}
	log.Info("board", "model", board.Model, "soc", board.SoC.String(), "peripheral_base", fmt.Sprintf("%#x", board.PeriBase),
		"core_clock_min_hz", board.CoreClockMinHz, "core_clock_max_hz", core, "note", board.CoreClockNote)
	chip, err := gpio.OpenChip(cfg.Hardware.GPIOChip)
	if err != nil {
		saved.Restore()
		m.Close()
		return nil, err
	}
	h := &hardware{gpio: g}
	h.clk, h.seen = mono.Now, mono.Now
	if err := h.chooseRealClock(cfg.Hardware.ClockSource, m, board, log); err != nil {
		chip.Close()
		saved.Restore()
		m.Close()
		return nil, err
	}
	h.logClock(log)
	h.spi = bcm2835.NewSPI(sr, g, bcm2835.SPIOptions{CoreClockHz: core, MinCoreClockHz: board.CoreClockMinHz, PollBudget: cfg.Hardware.PollBudget.D(), Clock: h.clk})
	var lines []*gpio.Line
	for i := range cfg.Controllers {
		cc := &cfg.Controllers[i]
		l, err := chip.RequestLine(uint32(cc.IntGPIO), gpio.LineConfig{
			Consumer: "cand-" + cc.Name,
			Bias:     gpio.BiasPullUp,
			Edge:     gpio.EdgeFalling,
			Debounce: cc.IntDebounce.D(),
		})
		if err != nil {
			for _, l := range lines {
				l.Close()
			}
			chip.Close()
			saved.Restore()
			m.Close()
			return nil, fmt.Errorf("controller %s: INT on GPIO %d: %w", cc.Name, cc.IntGPIO, err)
		}
		lines = append(lines, l)
		h.fds = append(h.fds, l.Fd())
	}
	release := func() {
		for _, l := range lines {
			l.Close()
		}
		chip.Close()
		if err := saved.Restore(); err != nil {
			log.Warn("restoring pins", "err", err)
		}
		m.Close()
	}
	return &bcm2835Backend{hardware: h, release: release, log: log}, nil
}

// chooseRealClock picks the board's clock for hardware.clock_source setting on
// this machine (mono.Detect, with the timing of a clock read against a null
// system call) and, for the System Timer, maps it. Under auto a System Timer
// that cannot be read leaves the runtime's clock, with a warning.
func (h *hardware) chooseRealClock(setting config.ClockSource, m *bcm2835.Mapping, board bcm2835.Board, log *slog.Logger) error {
	v := mono.Detect(mono.Probe{Root: "/", GOARCH: runtime.GOARCH, Machine: mono.KernelMachine()})
	h.src = chooseClock(setting, mono.Decide(v, mono.MeasureCost()))
	if h.src.name != config.ClockSourceSystemTimer {
		return nil
	}
	err := m.MapSystemTimer(board, "/")
	var r *bcm2835.MMIO[bcm2835.STReg]
	if err == nil {
		r, err = bcm2835.NewMMIO[bcm2835.STReg](m.SystemTimer)
	}
	if err == nil {
		st := bcm2835.NewSystemTimer(r)
		err = h.useSystemTimer(st, func() (mono.Sample, error) { return mono.SampleEdge(st, mono.Now) })
	}
	if err == nil {
		// Real registers may be read from any thread: the other threads (the
		// chip's timestamps, the bus load's sampler) avoid the system call too.
		h.seen = h.clk
		return nil
	}
	if setting == config.ClockSourceSystemTimer {
		return err
	}
	log.Warn("System Timer clock unavailable: reading the runtime's clock instead", "err", err)
	h.src.name = config.ClockSourceRuntime
	h.src.reason += "; but the System Timer could not be read: " + err.Error()
	return nil
}

// A real Pi runs nothing by itself and has no metrics or report of its own.
func (b *bcm2835Backend) threads() int { return 0 }

// paceDelivery gives the delivery thread the System Timer clock where the owner
// reads it (its registers may be read from any thread): there the runtime's
// clock is a system call.
func (b *bcm2835Backend) paceDelivery(d *bridge.Delivery) {
	if b.timer != nil {
		d.Clock = b.clk
	}
}

// cores is the CPUs this process may run on.
func (b *bcm2835Backend) cores() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return runtime.NumCPU()
	}
	return set.Count()
}
func (b *bcm2835Backend) observe(*metrics.Registry) {}
func (b *bcm2835Backend) start(ctx context.Context) { b.keepTied(ctx, b.log) }
func (b *bcm2835Backend) bindOwner()                {}
func (b *bcm2835Backend) report()                   {}
func (b *bcm2835Backend) close()                    { b.release() }
