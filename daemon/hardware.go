package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"cand/bridge"
	"cand/config"
	"cand/hw/bcm2835"
	"cand/hw/gpio"
	"cand/sim"
)

// hardware is one backend: the SPI0 engine and GPIO block on registers (real or
// modelled), and each controller's INT line as an event fd plus a level.
type hardware struct {
	spi   *bcm2835.SPI
	gpio  *bcm2835.GPIO
	core  uint32 // core clock the SCLK divider is sized for
	pi    *sim.Pi
	fds   []int
	start func(ctx context.Context)
	close func()
}

func openHardware(ctx context.Context, cfg *config.Config, opt Options, log *slog.Logger) (*hardware, error) {
	switch cfg.Hardware.Backend {
	case config.BackendBCM2835:
		return openBCM2835(cfg, log)
	default:
		return openSim(cfg, opt)
	}
}

func openSim(cfg *config.Config, opt Options) (*hardware, error) {
	pi := opt.Sim
	if pi == nil {
		var err error
		pi, err = sim.New(cfg)
		if err != nil {
			return nil, err
		}
	}
	g := bcm2835.NewGPIO(pi.GPIO(), pi.SoC())
	// The same pin set-up as on a real Pi: SPI0 pins to ALT0, INT inputs with
	// pull-ups. The model's chip selects only reach the chips through it.
	plan, err := pinPlan(cfg)
	if err != nil {
		return nil, err
	}
	saved, err := bcm2835.SetupPins(g, plan)
	if err != nil {
		return nil, err
	}
	h := &hardware{
		gpio:  g,
		core:  pi.CoreClockHz(),
		pi:    pi,
		start: pi.Start,
		close: func() { saved.Restore(); pi.Close() },
	}
	h.spi = bcm2835.NewSPI(pi.SPI0(), g, bcm2835.SPIOptions{CoreClockHz: h.core, PollBudget: cfg.Hardware.PollBudget.D()})
	for i := range cfg.Controllers {
		h.fds = append(h.fds, pi.IntFd(i))
	}
	return h, nil
}

func openBCM2835(cfg *config.Config, log *slog.Logger) (*hardware, error) {
	board, err := bcm2835.Detect("/")
	if err != nil {
		return nil, err
	}
	m, err := bcm2835.Map(board, "/")
	if err != nil {
		return nil, err
	}
	gr, err := bcm2835.NewMMIO(m.GPIO)
	if err != nil {
		m.Close()
		return nil, err
	}
	sr, err := bcm2835.NewMMIO(m.SPI0)
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
	h := &hardware{gpio: g, core: core}
	h.spi = bcm2835.NewSPI(sr, g, bcm2835.SPIOptions{CoreClockHz: core, MinCoreClockHz: board.CoreClockMinHz, PollBudget: cfg.Hardware.PollBudget.D()})
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
	h.close = func() {
		for _, l := range lines {
			l.Close()
		}
		chip.Close()
		if err := saved.Restore(); err != nil {
			log.Warn("restoring pins", "err", err)
		}
		m.Close()
	}
	return h, nil
}

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

func chipSelect(cc *config.Controller) (bcm2835.ChipSelect, error) {
	s := strings.ToLower(cc.SPI.ChipSelect)
	switch {
	case s == "" || s == "ce0":
		return bcm2835.ChipSelect{Native: 0, ActiveHigh: cc.SPI.CSActiveHigh}, nil
	case s == "ce1":
		return bcm2835.ChipSelect{Native: 1, ActiveHigh: cc.SPI.CSActiveHigh}, nil
	case strings.HasPrefix(s, "gpio"):
		n, err := strconv.Atoi(s[4:])
		if err == nil {
			return bcm2835.ChipSelect{Native: -1, GPIO: n, ActiveHigh: cc.SPI.CSActiveHigh}, nil
		}
	}
	return bcm2835.ChipSelect{}, fmt.Errorf("spi.chip_select %q: use ce0, ce1 or gpioN", cc.SPI.ChipSelect)
}
