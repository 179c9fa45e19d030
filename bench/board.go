package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	"cand/bench/transfer"
	"cand/config"
	"cand/hw/bcm2835"
	"cand/internal/mono"
	"cand/mcp2515"
	"cand/sim"
)

// On a real board (hardware.backend: bcm2835) the benchmark runs what needs no
// bus: the SPI engine's transfers with the MCP2515 answering (READ of its
// registers, which changes nothing), and the whole pipeline with the controller
// in loopback mode, the frames written to cand's socket sent and received inside
// the chip. The same code runs on the virtual Pi (the loopback scenarios of
// Workloads and BoardSuite; the chip model loops frames back as the chip does).

// BoardInfo is the board a run was made on.
type BoardInfo struct {
	// Backend is sim (the virtual Pi) or bcm2835 (a real board).
	Backend  string `json:"backend"`
	Model    string `json:"model"`
	SoC      string `json:"soc"`
	Revision string `json:"revision,omitempty"`
	// CoreClockHz is the core clock SPI0 divides (the configured one, or the
	// board's highest).
	CoreClockHz uint32 `json:"core_clock_hz"`
}

// DetectBoard describes the board cfg runs on: the virtual Pi, or the real board
// as hw/bcm2835's Detect finds it.
func DetectBoard(cfg *config.Config) (BoardInfo, error) {
	if cfg.Hardware.Backend != config.BackendBCM2835 {
		p, err := sim.ProfileOf(cfg.Hardware.SimBoard)
		if err != nil {
			return BoardInfo{}, err
		}
		hw, err := bcm2835.FromRevision(p.Revision)
		if err != nil {
			return BoardInfo{}, err
		}
		core := cfg.Hardware.CoreClockHz
		if core == 0 {
			core = hw.CoreClockMaxHz
		}
		return BoardInfo{Backend: string(config.BackendSim), Model: "virtual Pi playing a " + p.Model + " (sim)", SoC: hw.SoC.String(), CoreClockHz: core}, nil
	}
	b, err := bcm2835.Detect("/")
	if err != nil {
		return BoardInfo{}, err
	}
	core := cfg.Hardware.CoreClockHz
	if core == 0 {
		core = b.CoreClockMaxHz
	}
	bi := BoardInfo{Backend: string(config.BackendBCM2835), Model: b.Model, SoC: b.SoC.String(), CoreClockHz: core}
	if b.Revision != 0 {
		bi.Revision = fmt.Sprintf("%06x", b.Revision)
	}
	return bi, nil
}

// BoardBaseOf takes the hardware (backend kept), realtime, and the first
// controller's SPI settings, INT pin and oscillator of cfg: the wiring of the
// board the loopback scenarios run on.
func BoardBaseOf(cfg *config.Config) Base {
	b := Base{Hardware: cfg.Hardware, Realtime: cfg.Realtime}
	if len(cfg.Controllers) > 0 {
		cc := &cfg.Controllers[0]
		b.SPI, b.IntGPIO, b.OscillatorHz = cc.SPI, cc.IntGPIO, cc.OscillatorHz
	}
	return b
}

// BoardSuite is what runs on a real board: the pipeline in loopback mode at
// 125k, 500k and 1M with the INT poll window on, and at 1M with it off; the
// benchmark writes a frame every 2 ms, 500 µs and 250 µs (about half of what the
// chip's loopback can carry at each bitrate).
func BoardSuite(d Durations) []Scenario {
	var s []Scenario
	for _, c := range []struct {
		br     uint32
		win    time.Duration
		period time.Duration
	}{
		{125_000, DefaultIntPollWindow, 2 * time.Millisecond},
		{500_000, DefaultIntPollWindow, 500 * time.Microsecond},
		{1_000_000, DefaultIntPollWindow, 250 * time.Microsecond},
		{1_000_000, 0, 250 * time.Microsecond},
	} {
		onoff := "on"
		if c.win == 0 {
			onoff = "off"
		}
		wl := &Workload{Kind: "loopback", Buses: []BusLoad{{}}, Loopback: true, TX: &TXStream{IDs: []uint32{0x123}, Period: c.period}}
		s = append(s, Scenario{Name: fmt.Sprintf("loopback-%s-window-%s", Rate(c.br), onoff), Bitrate: c.br, DLC: 8,
			IntPollWindow: c.win, Duration: d.Other, Workload: wl})
	}
	return s
}

// RunBoard is the benchmark of a board: the SPI engine comparison with the
// MCP2515 answering (transfers per size and mode, none if 0), then the loopback
// scenarios, on the board cfg names.
func RunBoard(ctx context.Context, cfg *config.Config, scenarios []Scenario, transfers int, base *Base, progress io.Writer) (*Report, error) {
	rep := &Report{}
	if transfers > 0 {
		fmt.Fprintf(progress, "bench: SPI engine with the MCP2515 answering, %v-byte READs, poll vs sleep...\n", TransferSizes)
		x, err := BoardTransfers(cfg, TransferSizes, transfers)
		if err != nil {
			return rep, err
		}
		rep.Transfers = x
	}
	if err := runAll(ctx, rep, scenarios, base, progress, RunLoopback); err != nil {
		return rep, err
	}
	rep.Targets = Targets(rep)
	return rep, nil
}

// RunLoopback runs a loopback scenario (BoardSuite) the way it runs on a real
// board, on the board the configuration names: the real one (hardware.backend:
// bcm2835) or the virtual Pi.
func RunLoopback(ctx context.Context, sc Scenario, base *Base) (ScenarioResult, error) {
	res := ScenarioResult{Name: sc.Name, Bitrate: sc.Bitrate, DLC: sc.DLC, IntPollWindowUs: us(sc.IntPollWindow)}
	res.Workload = sc.workload().Kind
	cfg, err := sc.Config(base)
	if err != nil {
		return res, err
	}
	return runOnBoard(ctx, sc, cfg, res)
}

// runOnBoard runs a loopback scenario on the board cfg names.
func runOnBoard(ctx context.Context, sc Scenario, cfg *config.Config, res ScenarioResult) (ScenarioResult, error) {
	wl := sc.workload()
	if !wl.Loopback || len(wl.Buses) != 1 || len(wl.Buses[0].Peers) > 0 || wl.TX == nil {
		return res, fmt.Errorf("bench: scenario %s needs the virtual Pi's buses and peers; on a real board only the loopback scenarios run (cand bench -loopback)", sc.Name)
	}
	board, err := DetectBoard(cfg)
	if err != nil {
		return res, err
	}
	byteNs, err := spiByteNs(board.CoreClockHz, cfg.Controllers[0].SPI)
	if err != nil {
		return res, err
	}
	var pi *sim.Pi
	clock := mono.Now
	if cfg.Hardware.Backend != config.BackendBCM2835 {
		if pi, err = sim.New(cfg); err != nil {
			return res, err
		}
		clock = pi.Clock().Now
	}
	h, err := startDaemon(ctx, sc.Name, cfg, pi)
	if err != nil {
		return res, err
	}
	defer h.close()
	m := h.d.Owner.Ports[0].M
	w := &window{m: m, ring: h.d.Owner.RingWaiting}
	pw := h.portsWindow()
	r := newReader(h.hosts(), nil, wl.TX, true, clock, m.TXFrames.Load)
	err = observe(ctx, r, sc.Duration, []Observer{w, pw, newBusyWatch(h)}, &res)
	if serr := h.stop(); err == nil {
		err = serr
	}
	res.fillWindow(w, r, pw.d, h, cfg, byteNs)
	return res, err
}

// BoardTransfers compares the SPI engine polling-first with sleeping for every
// wait on the board cfg names (the real one, or the virtual Pi), with the first
// controller's MCP2515 answering: each transfer is a READ of size−2 registers from
// address 0, which changes nothing in the chip. The daemon must not be running.
func BoardTransfers(cfg *config.Config, sizes []int, n int) ([]transfer.Result, error) {
	regs, done, err := boardRegisters(cfg)
	if err != nil {
		return nil, err
	}
	defer done()
	cc := &cfg.Controllers[0]
	cs := bcm2835.ChipSelect{Native: 0, ActiveHigh: cc.SPI.CSActiveHigh}
	if ce, native := cc.SPI.ChipSelect.CE(); native {
		cs.Native = ce
	} else {
		cs.Native, cs.GPIO = -1, cc.SPI.ChipSelect.Pin()
	}
	g := bcm2835.NewGPIO(regs.gpio, regs.soc)
	saved, err := bcm2835.SetupPins(g, bcm2835.PinPlan{ChipSelects: []bcm2835.ChipSelect{cs}, Interrupts: []int{cc.IntGPIO}})
	if err != nil {
		return nil, err
	}
	defer saved.Restore()
	open := func(budget time.Duration) (*bcm2835.Device, func(), error) {
		opt := bcm2835.SPIOptions{CoreClockHz: regs.coreHz, MinCoreClockHz: regs.minCoreHz, PollBudget: budget}
		if budget == transfer.SleepBudget {
			opt.WakeLatency = transfer.SleepBudget // the sleeping side sleeps every wait
		}
		sp := bcm2835.NewSPI(regs.spi0, g, opt)
		d, err := sp.Device(bcm2835.DeviceConfig{ClockHz: cc.SPI.ClockHz, Mode: cc.SPI.Mode, CS: cs})
		return d, func() {}, err
	}
	var out []transfer.Result
	for _, size := range sizes {
		tx := make([]byte, size)
		tx[0] = mcp2515.InstrRead
		r, err := transfer.Compare(size, n, open, tx)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// registers are a board's GPIO and SPI0 blocks.
type registers struct {
	gpio              bcm2835.Regs[bcm2835.GPIOReg]
	spi0              bcm2835.Regs[bcm2835.SPIReg]
	soc               bcm2835.SoC
	coreHz, minCoreHz uint32
}

// boardRegisters maps the real board's registers, or builds the virtual Pi of
// cfg (its buses are not started: the chip only answers SPI).
func boardRegisters(cfg *config.Config) (registers, func(), error) {
	if cfg.Hardware.Backend != config.BackendBCM2835 {
		pi, err := sim.New(cfg)
		if err != nil {
			return registers{}, nil, err
		}
		return registers{gpio: pi.GPIO(), spi0: pi.SPI0(), soc: pi.SoC(), coreHz: pi.CoreClockHz()}, pi.Close, nil
	}
	b, err := bcm2835.Detect("/")
	if err != nil {
		return registers{}, nil, err
	}
	m, err := bcm2835.Map(b, "/")
	if err != nil {
		return registers{}, nil, err
	}
	gr, err := bcm2835.NewMMIO[bcm2835.GPIOReg](m.GPIO)
	if err != nil {
		m.Close()
		return registers{}, nil, err
	}
	sr, err := bcm2835.NewMMIO[bcm2835.SPIReg](m.SPI0)
	if err != nil {
		m.Close()
		return registers{}, nil, err
	}
	core := cfg.Hardware.CoreClockHz
	if core == 0 {
		core = b.CoreClockMaxHz
	}
	return registers{gpio: gr, spi0: sr, soc: b.SoC, coreHz: core, minCoreHz: b.CoreClockMinHz}, func() { m.Close() }, nil
}
