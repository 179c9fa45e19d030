// Package sim is the virtual Pi: a register-level BCM2835 (sim/soc) with one
// MCP2515 chip model (sim/mcpchip) per configured controller, each on its own
// simulated CAN bus (sim/canbus) with the configured peers. cand runs on it by
// default, with the same driver code that runs on real registers: the daemon gets
// the SPI0 and GPIO register blocks and each INT line's event fd from here, and
// nothing else. Between the board and each chip sit its wires (wiring.go), where
// tests inject wiring faults: a chip that does not answer, an INT line held low.
package sim

import (
	"context"
	"fmt"

	"cand/config"
	"cand/hw/bcm2835"
	"cand/hw/pinout"
	"cand/sim/canbus"
	"cand/sim/clock"
	"cand/sim/mcpchip"
	"cand/sim/soc"
)

// DefaultCoreClockHz is the virtual Pi's core clock: a Pi 3's turbo clock, for
// which 10 MHz SCLK is exactly CDIV 40.
const DefaultCoreClockHz = 400_000_000

// Pi is the virtual board.
type Pi struct {
	clk   *clock.Clock
	soc   *soc.SoC
	buses []*canbus.Bus
	chips []*mcpchip.Chip
	edges []*soc.EdgeLine
	wires []*Wiring
	peers [][]*canbus.Peer
	stall soc.BusStall // gates SPI0 and GPIO as the driver sees them
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

// New builds the board for cfg: per controller an MCP2515 on its chip select and
// INT pin, on a bus at the controller's bitrate with its peers.
func New(cfg *config.Config) (*Pi, error) {
	core := cfg.Hardware.CoreClockHz
	if core == 0 {
		core = DefaultCoreClockHz
	}
	clk := clock.New()
	p := &Pi{clk: clk, soc: soc.NewOn(core, bcm2835.SoCBCM2837, clk)}
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
		chip.OnINT(func(level bool, at int64) {
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

// SPI0 is the SPI0 register block, behind the peripheral bus (BusStall).
func (p *Pi) SPI0() bcm2835.Regs { return p.stall.Gate(p.soc.SPI0()) }

// GPIO is the GPIO register block, behind the peripheral bus (BusStall).
func (p *Pi) GPIO() bcm2835.Regs { return p.stall.Gate(p.soc.GPIO()) }

// BusStall is the fault of the peripheral bus that SPI0 and GPIO are reached
// through: stalled, the owner thread's next register access never returns.
func (p *Pi) BusStall() *soc.BusStall { return &p.stall }

// SoC is the chip the board plays (pull-register style, pin count).
func (p *Pi) SoC() bcm2835.SoC { return p.soc.Kind() }

// Clock is the board's time base. The thread that plays the CPU binds itself to
// it (Clock().BindCPU) for the host's stalls of that thread not to count as the
// board's time; see sim/clock.
func (p *Pi) Clock() *clock.Clock { return p.clk }

// SoCModel is the register model, for tests and benchmarks.
func (p *Pi) SoCModel() *soc.SoC { return p.soc }

// CoreClockHz is the core clock SPI0 divides.
func (p *Pi) CoreClockHz() uint32 { return p.soc.CoreClockHz() }

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
