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
	"cand/internal/mono"
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

// socketPoll is how often an idle driver looks for a frame to send: the stack
// hands a frame to ndo_start_xmit at once; here a look is a system call, so the
// loop makes it at most this often (well below ThreadWake, charged on top).
const socketPoll = 10 * time.Microsecond

// Run drives the controllers the mcp251x way on cfg.Pi until ctx is done: it
// locks its goroutine to a thread, sets up the pins and the chips
// (mcp251x_open), binds the thread as the board's CPU (unless sim_cpu is
// shared), calls ready with the ports, and loops: an INT found low schedules
// the threaded handler IRQ + ThreadWake later; a frame in the socket, while the
// queue is awake, is taken (ndo_start_xmit) and schedules tx_work ThreadWake
// later; the due handler runs, each spi_sync charged SyncSetup, InCS and
// SyncReturn. Two controllers' wake-ups overlap; their handlers run one at a
// time, as one CPU. The board's buses must be running (Pi.Start).
//
// The driver thread never sleeps while it waits: it reads the INT levels
// through the GPIO level register in a loop, so an interrupt is seen within one
// register read and the whole latency is the calibrated charge. Charges spin on
// the board's clock, reading the GPIO level register meanwhile, so the buses
// go on while the kernel's time passes and the clock takes host stalls out of
// a charge as out of cand's time.
func Run(ctx context.Context, c Config, ready func([]Port)) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pi, cfg := c.Pi, c.Cfg
	g := bcm2835.NewGPIO(pi.GPIO(), pi.SoC())
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
	spi := bcm2835.NewSPI(pi.SPI0(), g, bcm2835.SPIOptions{CoreClockHz: pi.CoreClockHz(), PollBudget: cfg.Hardware.PollBudget.D()})
	clk := pi.Clock()
	d := &driver{stop: &atomic.Bool{}}
	// The board's time is read with Access, as a register access reads it: after
	// the clock took out a host stall that preceded it. (Now, between accesses,
	// may still include a stall the next access will take out.) Each turn of a
	// charge also reads the INT levels through the GPIO level register, which
	// moves the buses to the board's time and times each INT falling edge.
	charge := func(dt time.Duration) {
		end := clk.Access() + int64(dt)
		for clk.Access() < end {
			d.sample()
		}
	}
	for i := range cfg.Controllers {
		cc := &cfg.Controllers[i]
		dev, err := spi.Device(bcm2835.DeviceConfig{ClockHz: cc.SPI.ClockHz, Mode: cc.SPI.Mode, CS: plan.ChipSelects[i]})
		if err != nil {
			return fmt.Errorf("kernelref: controller %s: %w", cc.Name, err)
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
		dp.port = port{spi: spi, costs: c.Costs, charge: charge, now: mono.Now, st: &Stats{}, quit: d.stop.Load,
			edge: func() int64 { return dp.fallNs }}
		dp.port.deliver = dp.write
		dp.port.errFrame = dp.writeError
		mode := uint8(mcp2515.ModeNormal)
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
	if cfg.Hardware.SimCPU != config.SimCPUShared {
		if err := clk.BindCPU(); err == nil {
			defer clk.UnbindCPU()
		}
	}
	stopWatch := context.AfterFunc(ctx, func() { d.stop.Store(true) })
	defer stopWatch()
	var ports []Port
	for _, p := range d.ports {
		ports = append(ports, Port{Name: p.name, Stats: p.port.st})
	}
	ready(ports)
	err = d.loop(clk.Access, c.Costs)
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
	last  int // the port served last (round robin)
}

// drvPort is one controller with its pending work.
type drvPort struct {
	name string
	port port
	intr bcm2835.ActiveLow
	sock int

	istAt, txAt int64 // board time the IST / tx_work is due; 0 none
	lastLook    int64 // host time of the last look into the socket
	low         bool  // INT read low at the last sample
	fallNs      int64 // host time of the last INT falling edge seen
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
			p.fallNs = mono.Now()
		}
		p.low = low
	}
}

// loop runs the ports' handlers as they fall due. A run of the threaded handler
// holds the port's mutex (mcp_lock) from its start to the pass that ends it:
// that port's tx_work waits meanwhile, and the handler is not started again. One
// step is one pass of a handler run or one tx_work; the ports take turns, as two
// handler threads take turns on the one SPI bus.
func (d *driver) loop(now func() int64, c Costs) error {
	wake := int64(c.IRQ + c.ThreadWake)
	for !d.stop.Load() {
		t := now()
		d.sample()
		for _, p := range d.ports {
			if !p.port.inIST && p.istAt == 0 && p.low {
				p.istAt = t + wake
			}
			if p.txAt == 0 && p.port.queueAwake && !p.port.hasSkb {
				if h := mono.Now(); h-p.lastLook >= int64(socketPoll) {
					p.lastLook = h
					if f, ok, err := p.read(); err != nil {
						return err
					} else if ok && p.port.startXmit(f, h) {
						p.txAt = t + int64(c.ThreadWake)
					}
				}
			}
		}
		n := len(d.ports)
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
			d.last = i
			start := now()
			err := run()
			p.port.st.BusyNs.Add(uint64(max(now()-start, 0)))
			if err != nil {
				return fmt.Errorf("kernelref: %s: %w", p.name, err)
			}
			break
		}
	}
	return nil
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
