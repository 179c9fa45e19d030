package kernelref

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/config"
	"cand/hw/bcm2835"
	"cand/mcp2515"
	"cand/sim"
	"cand/socketcan"
)

// Config is what Run drives.
type Config struct {
	Pi *sim.Pi
	// Cfg gives the controllers (chip selects, INT pins, bit timing, mode) and
	// the hardware (SPI poll budget, sim_cpu). Filters are ignored: mcp251x sets
	// none.
	Cfg *config.Config
	// Sockets are the driver's ends of the controllers' CAN sockets, index-aligned
	// with Cfg.Controllers.
	Sockets []int
	Costs   Costs
	// Trace, if set, is told of each handler run ("ist", "tx_work") and each
	// transfer (instruction byte and length, "03/4"), per controller (tests).
	Trace func(port int, event string)
}

// Port is one controller as Run drives it.
type Port struct {
	Name  string
	Stats *Stats
}

// socketPoll is how often, in the board's time, an idle driver looks for a
// frame to send: the stack hands a frame to ndo_start_xmit at once; here a look
// is a system call (host time, no board time), so the loop makes it at most this
// often. ThreadWake is charged after the frame is taken.
const socketPoll = 10_000 // ns

// Run drives the controllers the mcp251x way on cfg.Pi until ctx is done: it
// locks its goroutine to a thread, sets up the pins and the chips
// (mcp251x_open), binds the thread as the board's CPU, calls ready with the
// ports, and loops: an INT found low schedules the threaded handler IRQ +
// ThreadWake after the edge; a frame in the socket, while the queue is awake, is
// taken (ndo_start_xmit) and schedules tx_work ThreadWake later; the due handler
// runs, each spi_sync costing SyncSetup, its bytes' wire time plus InCS, and
// SyncReturn. Two controllers' wake-ups overlap; their handlers run one at a
// time, as one CPU. The board's buses must be running (Pi.Start).
//
// The reference's time on the board is those charges and the wire's time only
// (boardCPU): its own Go code, its socket reads and writes, the SPI engine's
// code and register accesses, and host stalls of its thread take none. So the
// Pi must run under the strict rule (hardware.sim_cpu: strict), whose account
// the charges go through, at fixed clocks (hardware.sim_force_turbo: the
// governor would reset the account's costs).
func Run(ctx context.Context, c Config, ready func([]Port)) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pi, cfg := c.Pi, c.Cfg
	if pi.Rule() != config.SimCPUStrict || !pi.Board().ForceTurbo {
		return fmt.Errorf("kernelref: the virtual Pi runs sim_cpu %s, force_turbo %v: the reference charges its costs through the strict rule's account at fixed clocks; set hardware.sim_cpu: strict and hardware.sim_force_turbo: true",
			pi.Rule(), pi.Board().ForceTurbo)
	}
	clk := pi.Clock()
	if err := clk.BindCPU(); err != nil {
		return fmt.Errorf("kernelref: %w", err)
	}
	defer clk.UnbindCPU()
	cpu, restore, err := newBoardCPU(clk)
	if err != nil {
		return err
	}
	defer restore()
	g := bcm2835.NewGPIO(regs(cpu, pi.SoCModel().GPIO(), false, 0), pi.SoC())
	var plan bcm2835.PinPlan
	for i := range cfg.Controllers {
		cs, err := chipSelect(&cfg.Controllers[i])
		if err != nil {
			return err
		}
		plan.ChipSelects = append(plan.ChipSelects, cs)
		plan.Interrupts = append(plan.Interrupts, cfg.Controllers[i].IntGPIO)
	}
	saved, err := bcm2835.SetupPins(g, plan)
	if err != nil {
		return err
	}
	defer saved.Restore()
	// At fixed clocks the core clock is the highest: dividers sized for it give
	// each device its SCLK, as the kernel's spi-bcm2835 sizes them for the core
	// clock it runs at.
	spi := bcm2835.NewSPI(regs(cpu, pi.SoCModel().SPI0(), true, pi.CoreClockHz()), g, bcm2835.SPIOptions{CoreClockHz: pi.CoreClockHz(), PollBudget: cfg.Hardware.PollBudget.D()})
	d := &driver{stop: &atomic.Bool{}, cpu: cpu}
	cpu.sample, cpu.watch = d.sample, d.watch
	for i := range cfg.Controllers {
		cc := &cfg.Controllers[i]
		dev, err := spi.Device(bcm2835.DeviceConfig{ClockHz: cc.SPI.ClockHz, Mode: cc.SPI.Mode, CS: plan.ChipSelects[i]})
		if err != nil {
			return fmt.Errorf("kernelref: controller %s: %w", cc.Name, err)
		}
		if step := dev.ByteNs() / 4; cpu.waitStep == 0 || step < cpu.waitStep {
			cpu.waitStep = max(step, 1)
		}
		bt, err := cc.BitTiming()
		if err != nil {
			return fmt.Errorf("kernelref: controller %s: %w", cc.Name, err)
		}
		var spi Transport = dev
		if c.Trace != nil {
			spi = traced{dev, func(ev string) { c.Trace(i, ev) }}
		}
		dp := &drvPort{name: cc.Name, intr: g.ActiveLow(cc.IntGPIO), sock: c.Sockets[i], trace: c.Trace, index: i}
		dp.port = port{spi: spi, costs: c.Costs, charge: func(d time.Duration) { cpu.charge(int64(d)) }, now: cpu.now,
			cs: cpu.mark, up: cpu.until, byteNs: dev.ByteNs(), st: &Stats{}, quit: d.stop.Load,
			edge: func() int64 { return dp.fallNs }, stalls: func() uint64 { return cpu.stallSeq }}
		dp.port.deliver = dp.write
		dp.port.errFrame = dp.writeError
		mode := mcp2515.ModeNormal
		switch cc.Mode {
		case config.ModeLoopback:
			mode = mcp2515.ModeLoopback
		case config.ModeListenOnly:
			mode = mcp2515.ModeListenOnly
		}
		if err := dp.port.open(bt.CNF1, bt.CNF2, bt.CNF3, mode); err != nil {
			return fmt.Errorf("kernelref: controller %s: %w", cc.Name, err)
		}
		d.ports = append(d.ports, dp)
	}
	stopWatch := context.AfterFunc(ctx, func() { d.stop.Store(true) })
	defer stopWatch()
	var ports []Port
	for _, p := range d.ports {
		ports = append(ports, Port{Name: p.name, Stats: p.port.st})
	}
	cpu.late, cpu.stalls, cpu.stallTime = &ports[0].Stats.LateNs, &ports[0].Stats.HostStalls, &ports[0].Stats.HostStallNs
	ready(ports)
	err = d.loop(c.Costs)
	for _, p := range d.ports {
		if serr := p.port.stop(); serr != nil && err == nil {
			err = serr
		}
	}
	return err
}

// driver is the CPU's loop over the ports.
type driver struct {
	ports []*drvPort
	stop  *atomic.Bool
	cpu   *boardCPU
	last  int // the port served last (round robin)
}

// drvPort is one controller with its pending work.
type drvPort struct {
	name string
	port port
	intr bcm2835.ActiveLow
	sock int

	istAt, txAt int64 // board time the IST / tx_work is due; 0 none
	lookAt      int64 // board time of the next look into the socket
	low         bool  // INT read low at the last sample
	fallNs      int64 // board time of the sample that first found INT low
	runEnd      int64 // board time the port's last handler run ended
	b           [socketcan.FrameSize]byte
	trace       func(port int, event string)
	index       int
}

// traced tells of each transfer.
type traced struct {
	Transport
	ev func(string)
}

func (t traced) Transfer(tx, rx []byte, tm *bcm2835.Timing) error {
	err := t.Transport.Transfer(tx, rx, tm)
	t.ev(fmt.Sprintf("%02x/%d", tx[0], len(tx)))
	return err
}

// sample reads every INT level once, noting falling edges.
func (d *driver) sample() {
	for _, p := range d.ports {
		low := p.intr.Asserted()
		if low && !p.low {
			p.fallNs = d.cpu.now()
		}
		p.low = low
	}
}

// loop runs the ports' handlers as they fall due. A run of the threaded handler
// holds the port's mutex (mcp_lock) from its start to the pass that ends it:
// that port's tx_work waits meanwhile, and the handler is not started again. One
// step is one pass of a handler run or one tx_work; the ports take turns, as two
// handler threads take turns on the one SPI bus. A port's wake-up runs from its
// INT edge, or from the end of its last run if the edge came during it, while
// another port's handler may be running (another core's). With nothing due, the
// board's time passes a sampleStep at a time.
func (d *driver) loop(c Costs) error {
	wake := int64(c.IRQ + c.ThreadWake)
	for !d.stop.Load() {
		d.sample()
		t := d.cpu.now()
		for _, p := range d.ports {
			if !p.port.inIST && p.istAt == 0 && p.low {
				// An edge while the handler ran (the line masked, IRQF_ONESHOT)
				// is served once the run has ended.
				p.istAt = max(p.fallNs, p.runEnd) + wake
			}
			if p.txAt == 0 && p.port.queueAwake && !p.port.hasSkb && t >= p.lookAt {
				p.lookAt = t + socketPoll
				if f, ok, err := p.read(); err != nil {
					return err
				} else if ok && p.port.startXmit(f, t) {
					p.txAt = t + int64(c.ThreadWake)
				}
			}
		}
		n := len(d.ports)
		ran := false
		for k := 1; k <= n; k++ {
			i := (d.last + k) % n
			p := d.ports[i]
			var run func() error
			switch {
			case p.port.inIST:
				run = p.pass
			case p.istAt != 0 && p.istAt <= t:
				p.istAt = 0
				p.event("ist")
				p.port.istBegin()
				run = p.pass
			case p.txAt != 0 && p.txAt <= t:
				p.txAt = 0
				p.event("tx_work")
				run = p.port.txWork
			default:
				continue
			}
			d.last, ran = i, true
			wasIST := p.port.inIST
			start := d.cpu.now()
			err := run()
			p.port.st.BusyNs.Add(uint64(max(d.cpu.now()-start, 0)))
			if err != nil {
				return fmt.Errorf("kernelref: %s: %w", p.name, err)
			}
			if wasIST && !p.port.inIST {
				p.runEnd = d.cpu.now()
			}
			if !d.inIST() {
				d.cpu.settle()
			}
			break
		}
		if !ran {
			next := t + sampleStep
			for _, p := range d.ports {
				for _, due := range []int64{p.istAt, p.txAt} {
					if due != 0 && due < next {
						next = due
					}
				}
			}
			d.cpu.idle(max(next, t+1))
		}
	}
	return nil
}

// watch reports whether an INT edge would matter now: a port's handler is not
// running and not due, so its edge would start its wake-up.
func (d *driver) watch() bool {
	for _, p := range d.ports {
		if !p.port.inIST && p.istAt == 0 {
			return true
		}
	}
	return false
}

// inIST reports whether a port's handler run is in progress.
func (d *driver) inIST() bool {
	for _, p := range d.ports {
		if p.port.inIST {
			return true
		}
	}
	return false
}

// pass runs one pass of the port's handler run.
func (p *drvPort) pass() error {
	_, err := p.port.istPass()
	return err
}

func (p *drvPort) event(ev string) {
	if p.trace != nil {
		p.trace(p.index, ev)
	}
}

// read takes one frame from the socket, if there is one.
func (p *drvPort) read() (can.Frame, bool, error) {
	n, err := unix.Read(p.sock, p.b[:])
	if err == unix.EAGAIN || err == unix.EINTR {
		return can.Frame{}, false, nil
	}
	if err != nil {
		return can.Frame{}, false, fmt.Errorf("reading the socket: %w", err)
	}
	if n != socketcan.FrameSize {
		return can.Frame{}, false, nil
	}
	f, kind := socketcan.Decode(&p.b)
	return f, kind.Valid(), nil
}

// write is netif_rx: the frame goes to the socket.
func (p *drvPort) write(f *can.Frame) {
	var b [socketcan.FrameSize]byte
	socketcan.Encode(&b, *f)
	unix.Write(p.sock, b[:])
}

func (p *drvPort) writeError(e *socketcan.ErrorFrame) {
	var b [socketcan.FrameSize]byte
	e.Encode(&b)
	unix.Write(p.sock, b[:])
}

// chipSelect is the controller's chip select in the SPI engine's form.
func chipSelect(cc *config.Controller) (bcm2835.ChipSelect, error) {
	cs := cc.SPI.ChipSelect
	if !cs.IsSet() {
		return bcm2835.ChipSelect{}, fmt.Errorf("kernelref: controller %s: no chip select", cc.Name)
	}
	if ce, native := cs.CE(); native {
		return bcm2835.ChipSelect{Native: ce, ActiveHigh: cc.SPI.CSActiveHigh}, nil
	}
	return bcm2835.ChipSelect{Native: -1, GPIO: cs.Pin(), ActiveHigh: cc.SPI.CSActiveHigh}, nil
}
