// Package sim is the virtual Pi: a register-level BCM2835 (sim/soc) with one
// MCP2515 chip model (sim/mcpchip) per configured controller, each on its own
// simulated CAN bus (sim/canbus) with the configured peers. cand runs on it by
// default, with the same driver code that runs on real registers: the daemon gets
// the SPI0 and GPIO register blocks and each INT line's event fd from here, and
// nothing else. Between the board and each chip sit its wires (wiring.go), where
// tests inject wiring faults: a chip that does not answer, an INT line held low.
//
// The board it plays (hardware.sim_board, board.go) sets the SoC, the cores, the
// clocks as the board's firmware scales them (governor.go) and how much slower
// than this host the board's CPU runs the driver's code, calibrated when the
// board is built (calibrate.go) and again, continuously, on the owner thread
// while it runs (sim/clock, calib.go); under the strict clock rule the driver's
// time is charged at that speed (cpu.go). docs/boards.md gives the
// figures and their sources.
package sim

import (
	"context"
	"fmt"

	"cand/config"
	"cand/hw/bcm2835"
	"cand/hw/pinout"
	"cand/internal/kernelop"
	"cand/metrics"
	"cand/sim/canbus"
	"cand/sim/clock"
	"cand/sim/mcpchip"
	"cand/sim/soc"
)

// Pi is the virtual board.
type Pi struct {
	board Board
	rule  config.SimCPU
	clk   *clock.Clock
	soc   *soc.SoC
	gov   *governor // strict rule only
	buses []*canbus.Bus
	chips []*mcpchip.Chip
	edges []*soc.EdgeLine
	wires []*Wiring
	peers [][]*canbus.Peer
	stall soc.BusStall // gates SPI0 and GPIO as the driver sees them
	// intLow is per controller how long its INT line stayed low, in the board's
	// time: the board's own measure of how soon the driver served the chip.
	intLow []*intSpan
}

// Node is one controller's simulated world.
type Node struct {
	Bus   *canbus.Bus
	Chip  *mcpchip.Chip
	Peers []*canbus.Peer
	Edge  *soc.EdgeLine
	// Wiring is where tests break the chip's SPI and INT wires.
	Wiring *Wiring
}

// New builds the board for cfg: the board profile hardware.sim_board (pi3 if
// unset) on the clock rule hardware.sim_cpu (strict if unset), and per controller
// an MCP2515 on its chip select and INT pin, on a bus at the controller's bitrate
// with its peers. Under the strict rule it first calibrates the board's CPU
// against this host (a few milliseconds).
func New(cfg *config.Config) (*Pi, error) {
	h := &cfg.Hardware
	name, rule := h.SimBoard, h.SimCPU
	if name == "" {
		name = config.SimBoardPi3
	}
	if rule == "" {
		rule = config.SimCPUStrict
	}
	prof, err := ProfileOf(name)
	if err != nil {
		return nil, err
	}
	var host Calibration
	if rule == config.SimCPUStrict {
		host = Calibrate()
	}
	board, err := newBoard(prof, h, host)
	if err != nil {
		return nil, err
	}
	clk := clock.New()
	if rule == config.SimCPUDedicated {
		clk.SetRule(clock.Dedicated)
	}
	p := &Pi{board: board, rule: rule, clk: clk, soc: soc.NewOn(board.CoreMaxHz, board.SoC, clk)}
	if rule == config.SimCPUStrict {
		clk.SetKernel(newBurstKernel())
		clk.SetNoise(h.SimHostNoise != config.SimHostNoiseCharge)
		p.gov = newGovernor(board, h.HoldCPUClock, clk, p.soc)
	}
	for i := range cfg.Controllers {
		cc := &cfg.Controllers[i]
		bt, err := cc.BitTiming()
		if err != nil {
			return nil, fmt.Errorf("sim: controller %s: %w", cc.Name, err)
		}
		bus := canbus.NewOn(bt.Bitrate, clk)
		chip := mcpchip.New(cc.OscillatorHz, bus)
		pin, err := csPin(cc.SPI.ChipSelect)
		if err != nil {
			return nil, fmt.Errorf("sim: controller %s: %w", cc.Name, err)
		}
		edge, err := soc.NewEdgeLine(uint32(cc.IntGPIO))
		if err != nil {
			return nil, fmt.Errorf("sim: controller %s: INT line: %w", cc.Name, err)
		}
		w := newWiring(chip, edge, clk)
		if cc.Sim.ChipAbsent {
			chip.Unplug(true) // no chip: MISO floats to the pull-up's 0xFF, nothing is clocked in
		}
		if err := p.soc.AttachSPI(w, pin, cc.SPI.CSActiveHigh); err != nil {
			return nil, fmt.Errorf("sim: controller %s: %w", cc.Name, err)
		}
		if err := p.soc.AttachInput(cc.IntGPIO, w); err != nil {
			return nil, fmt.Errorf("sim: controller %s: %w", cc.Name, err)
		}
		// The kernel stamps an edge event with host time. A falling INT wakes
		// the owner thread if it waits in epoll_wait (sim/clock).
		// The event is written once the bus's lock is released: the write wakes
		// the owner thread, which must not find the lock still held.
		flush := edge.Flush
		low := &intSpan{}
		p.intLow = append(p.intLow, low)
		chip.OnINT(func(level bool, at int64) {
			low.edge(level, at)
			w.chipINT(level, at)
			bus.AfterUnlock(flush)
		})
		peers, err := newPeers(bus, cc.Sim.Peers)
		if err != nil {
			return nil, fmt.Errorf("sim: controller %s: %w", cc.Name, err)
		}
		p.buses = append(p.buses, bus)
		p.chips = append(p.chips, chip)
		p.edges = append(p.edges, edge)
		p.wires = append(p.wires, w)
		p.peers = append(p.peers, peers)
	}
	return p, nil
}

// csPin is the GPIO that carries the controller's chip select.
func csPin(cs pinout.ChipSelect) (int, error) {
	if !cs.IsSet() {
		return 0, fmt.Errorf("chip select not set: use ce0, ce1 or gpioN")
	}
	return cs.Pin(), nil
}

// SPI0 is the SPI0 register block, as the board's CPU reaches it (boardView).
func (p *Pi) SPI0() bcm2835.Regs[bcm2835.SPIReg] {
	return boardView(&p.stall, p.soc.SPI0(), p.clk, p.gov)
}

// GPIO is the GPIO register block, as the board's CPU reaches it (boardView).
func (p *Pi) GPIO() bcm2835.Regs[bcm2835.GPIOReg] {
	return boardView(&p.stall, p.soc.GPIO(), p.clk, p.gov)
}

// SystemTimer is the System Timer register block, as the board's CPU reaches it
// (boardView): a clock read on it costs the board three register accesses.
func (p *Pi) SystemTimer() bcm2835.Regs[bcm2835.STReg] {
	return boardView(&p.stall, p.soc.SystemTimer(), p.clk, p.gov)
}

// BusStall is the fault of the peripheral bus that SPI0 and GPIO are reached
// through: stalled, the owner thread's next register access never returns.
func (p *Pi) BusStall() *soc.BusStall { return &p.stall }

// Kernel is what the owner thread brackets its frame-path system calls with
// (bridge.Owner.Kernel): under the strict rule, the board's clock, which with the
// board's kernel figures (hardware.sim_kernel_cost: board, the default) charges
// each call at the board's cost of its kind of kernel work (with user_factor,
// at the user-code factor, as running), and takes the simulator's own calls
// (kernelop.SimOnly) out either way; nil otherwise (host time).
func (p *Pi) Kernel() kernelop.Meter {
	if p.gov == nil {
		return nil
	}
	return p.clk
}

// KernelCost is, for a thread of cand's other than the owner that keeps its own
// board time (sim.DeliveryCore), the board's time for a system call of kind op
// that took hostNs on the host, at the board's kernel cost of its kind and its
// ARM clock now; nil where Kernel is nil (the calls at the user-code factor).
func (p *Pi) KernelCost() func(op kernelop.Op, hostNs int64) int64 {
	if p.Kernel() == nil || !p.board.BoardKernel() {
		return nil
	}
	return p.clk.KernelCost
}

// Board is the board the virtual Pi plays, with this host's calibration.
func (p *Pi) Board() Board { return p.board }

// Rule is the clock rule it runs on.
func (p *Pi) Rule() config.SimCPU { return p.rule }

// Clocks are the board's ARM and core clocks now.
func (p *Pi) Clocks() (armHz, coreHz uint32) {
	if p.gov == nil {
		return p.board.ARMMaxHz, p.soc.CoreClockHz()
	}
	return p.gov.armHz.Load(), p.gov.coreHz.Load()
}

// Factor is board ns per host ns of the owner thread's own running now (1 but
// under the strict rule).
func (p *Pi) Factor() float64 {
	if p.gov == nil {
		return 1
	}
	return float64(p.clk.CPU().Factor) / clock.FactorUnit
}

// INTLow is how long controller i's INT line stayed low each time, in the
// board's time.
func (p *Pi) INTLow(i int) *metrics.Histogram { return &p.intLow[i].h }

// SoC is the chip the board plays (pull-register style, pin count).
func (p *Pi) SoC() bcm2835.SoC { return p.soc.Kind() }

// Clock is the board's time base. The thread that plays the CPU binds itself to
// it (Clock().BindCPU) for the host's stalls of that thread not to count as the
// board's time; see sim/clock.
func (p *Pi) Clock() *clock.Clock { return p.clk }

// SoCModel is the register model, for tests and benchmarks.
func (p *Pi) SoCModel() *soc.SoC { return p.soc }

// CoreClockHz is the core clock SPI0 divides now.
func (p *Pi) CoreClockHz() uint32 { return p.soc.CoreClockHz() }

// CoreClockRange is the range the board's firmware moves the core clock through
// (one value when pinned): what the driver sizes SPI dividers for, as
// hw/bcm2835's Detect reports it on a real board.
func (p *Pi) CoreClockRange() (minHz, maxHz uint32) { return p.board.CoreMinHz, p.board.CoreMaxHz }

// IntFd is controller i's INT line: the read end the driver epolls.
func (p *Pi) IntFd(i int) int { return p.edges[i].Fd() }

// Node returns controller i's simulated world.
func (p *Pi) Node(i int) Node {
	return Node{Bus: p.buses[i], Chip: p.chips[i], Peers: p.peers[i], Edge: p.edges[i], Wiring: p.wires[i]}
}

// Start runs the buses and starts the peers; they stop when ctx is done.
func (p *Pi) Start(ctx context.Context) {
	now := p.clk.Reach()
	for i, b := range p.buses {
		for _, peer := range p.peers[i] {
			peer.Start(now) // takes the bus lock
		}
		go b.Run(ctx)
	}
}

// Close stops the buses and closes the INT lines.
func (p *Pi) Close() {
	for _, b := range p.buses {
		b.Close()
	}
	for _, e := range p.edges {
		e.Close()
	}
}
