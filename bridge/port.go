package bridge

import (
	"time"

	"go.einride.tech/can"

	"cand/hw/gpio"
	"cand/internal/mono"
	"cand/mcp2515"
	"cand/metrics"
	"cand/socketcan"
)

// Port is one MCP2515 with its interrupt line and its SocketCAN socket.
type Port struct {
	Name string
	Ctl  *mcp2515.Controller
	// IntFd delivers the INT line's edge events (struct gpio_v2_line_event records):
	// the GPIO character device's line request fd, or the simulator's pipe.
	IntFd int
	// SockFd is the raw CAN socket (or, in tests, one end of a SOCK_SEQPACKET pair).
	SockFd int
	M      *metrics.Controller
	// ErrorFrames: send SocketCAN error frames for state changes and overflows.
	ErrorFrames bool
	// RestartNs is how long after bus-off the controller is restarted (like the
	// kernel's restart-ms); 0 = only on request (Owner.Restart).
	RestartNs int64
	// TxTimeoutNs aborts the pending frames when the oldest has waited this long
	// for the bus (0 = never).
	TxTimeoutNs int64
	// Log reports state changes (chip lost, chip back); never called per frame.
	Log func(msg string, args ...any)

	spi *SPI // the transport, for per-interrupt CS timing

	// per-interrupt state
	edgeNs int64 // kernel timestamp of the INT edge being handled
	// releasedNs is when an interrupt was last handled to the end (INT high): an
	// edge stamped before it was already handled (e.g. by the poll window).
	releasedNs int64

	// TX
	sockReadable bool     // edge-triggered: set on EPOLLIN, cleared on EAGAIN
	txReadNs     [3]int64 // when each TX buffer's frame was read from the socket
	rxBuf        [16]byte
	txBuf        [16]byte
	errBuf       [16]byte
	evBuf        [16 * gpio.EventSize]byte
	ev           [16]gpio.Event
	seq          gpio.SeqTracker
	drops        uint32 // SO_RXQ_OVFL: kernel's drop count for our receive queue
	lastDrops    uint32

	needReinit bool
	// busOff: the controller left the bus; it is held in Configuration mode (which
	// also stops the MCP2515's own recovery) until restartAt (0 = manual restart).
	busOff    bool
	held      bool
	restartAt int64

	// Chip health: checked when idle every healthEvery; a chip that does not
	// answer puts the port down, retried with a doubling back-off.
	healthAt  int64
	down      bool
	retryAt   int64
	backoff   int64
	stuck     bool   // INT still asserted after HandleInterrupt's bound
	uncertain uint64 // Ctl.Stats().RXOrderUncertain already exported
}

// NewPort wires a controller to its INT line and socket. spi must be the transport
// the controller was built on.
func NewPort(name string, ctl *mcp2515.Controller, spi *SPI, intFd, sockFd int, m *metrics.Controller, errorFrames bool) *Port {
	return &Port{Name: name, Ctl: ctl, spi: spi, IntFd: intFd, SockFd: sockFd, M: m, ErrorFrames: errorFrames}
}

// Received implements mcp2515.Sink: the frame is written to the socket at once.
func (p *Port) Received(f *can.Frame) {
	socketcan.Encode(&p.rxBuf, *f)
	p.spi.probe.socketWrite(true)
	err := socketcan.WriteFrame(p.SockFd, &p.rxBuf)
	p.spi.probe.socketWrite(false)
	if err != nil {
		// vcan does not block; ENOBUFS or EAGAIN mean the host side could not take
		// it. Counted, never silent.
		p.M.SocketWriteErrs.Inc()
		return
	}
	now := mono.Now()
	p.M.RXFrames.Inc()
	p.M.RXBytes.Add(uint64(f.Length))
	if p.edgeNs != 0 {
		p.M.RXEndToEnd.Observe(now - p.edgeNs)
	}
}

// Transmitted implements mcp2515.Sink.
func (p *Port) Transmitted(buf int) {
	now := mono.Now()
	p.M.TXFrames.Inc()
	if t := p.txReadNs[buf]; t != 0 {
		p.M.TXSocketToDone.Observe(now - t)
		p.txReadNs[buf] = 0
	}
}

// BothFull implements mcp2515.Sink.
func (p *Port) BothFull(ns int64) { p.M.BothRXFull.Observe(ns) }

// TxFailed implements mcp2515.Sink: the frame was aborted (TX timeout) or failed in
// one-shot mode. Counted, never silent.
func (p *Port) TxFailed(buf int) {
	p.M.TXDropped.Inc()
	p.txReadNs[buf] = 0
}

// Error implements mcp2515.Sink.
func (p *Port) Error(e *mcp2515.ErrorEvent) {
	if e.ChipReset {
		p.needReinit = true
		return
	}
	p.M.BusState.Set(int64(e.State))
	p.M.TEC.Set(int64(e.TEC))
	p.M.REC.Set(int64(e.REC))
	if e.RX0Overflow {
		p.M.RXOverflows.Inc()
	}
	if e.RX1Overflow {
		p.M.RXOverflows.Inc()
	}
	if e.MessageError {
		p.M.MessageErrors.Inc()
	}
	if e.State == mcp2515.StateBusOff && e.Prev != mcp2515.StateBusOff {
		p.M.BusOffs.Inc()
		p.busOff = true
		if p.RestartNs > 0 {
			p.restartAt = mono.Now() + p.RestartNs
		}
	}
	if !p.ErrorFrames {
		return
	}
	ef := errorFrameFor(e)
	if ef.Class == 0 {
		return
	}
	p.sendError(&ef)
}

// sendError writes an error frame to the socket (if error frames are on) and
// counts it, or counts the failure.
func (p *Port) sendError(ef *socketcan.ErrorFrame) {
	if !p.ErrorFrames {
		return
	}
	ef.Encode(&p.errBuf)
	if err := socketcan.WriteFrame(p.SockFd, &p.errBuf); err != nil {
		p.M.SocketWriteErrs.Inc()
		return
	}
	p.M.ErrorFrames.Inc()
}

// interrupt handles one INT assertion whose edge the kernel stamped at edgeNs.
func (p *Port) interrupt(edgeNs int64) error {
	p.spi.probe.interrupt(true)
	defer p.spi.probe.interrupt(false)
	start := mono.Now()
	p.M.Interrupts.Inc()
	p.edgeNs = edgeNs
	if edgeNs != 0 {
		p.M.IntToHandler.Observe(start - edgeNs)
	}
	p.spi.BeginInterrupt(start)
	done, err := p.Ctl.HandleInterrupt(p)
	if err != nil {
		return err
	}
	p.spi.EndInterrupt()
	p.stuck = !done
	if done {
		p.releasedNs = mono.Now()
	}
	if u := p.Ctl.Stats().RXOrderUncertain; u != p.uncertain {
		p.M.RXOrderUncertain.Add(u - p.uncertain)
		p.uncertain = u
	}
	if edgeNs != 0 {
		p.M.IntHandled.Observe(mono.Now() - edgeNs)
	}
	p.edgeNs = 0
	if p.needReinit {
		// The chip reset itself (CNF/CANINTE lost): program it again.
		p.needReinit = false
		p.chipLost(mcp2515.ErrChipReset)
		return nil
	}
	if p.busOff && !p.held {
		// Hold the controller off the bus until the restart: Configuration mode
		// stops the MCP2515's automatic recovery after 128 × 11 recessive bits.
		p.held = true
		return p.Ctl.Stop()
	}
	return nil
}

// restart re-initialises the controller (RESET clears TEC/REC: error-active) after
// bus-off or a chip reset. Frames that were loaded and not sent are dropped and
// counted; frames still in the socket queue go out afterwards. announce sends
// CAN_ERR_RESTARTED, as the kernel does after a bus-off restart.
func (p *Port) restart(announce bool) error {
	if n := p.Ctl.Pending(); n > 0 {
		p.M.TXDropped.Add(uint64(n))
	}
	p.txReadNs = [3]int64{}
	if err := p.Ctl.Init(); err != nil {
		return err
	}
	p.busOff, p.held, p.restartAt = false, false, 0
	p.M.BusState.Set(int64(mcp2515.StateErrorActive))
	p.M.TEC.Set(0)
	p.M.REC.Set(0)
	if announce {
		p.sendError(&socketcan.ErrorFrame{Class: socketcan.CAN_ERR_RESTARTED})
	}
	return nil
}

// txDeadline is when the oldest pending frame times out (0: none pending, or no
// timeout).
func (p *Port) txDeadline() int64 {
	if p.TxTimeoutNs == 0 || p.busOff {
		return 0
	}
	var oldest int64
	for _, t := range p.txReadNs {
		if t != 0 && (oldest == 0 || t < oldest) {
			oldest = t
		}
	}
	if oldest == 0 {
		return 0
	}
	return oldest + p.TxTimeoutNs
}

// txTimeout aborts every pending frame (ABAT), reports CAN_ERR_TX_TIMEOUT, and
// services the chip once so the aborted buffers are released.
func (p *Port) txTimeout() error {
	if err := p.Ctl.Abort(); err != nil {
		return err
	}
	p.sendError(&socketcan.ErrorFrame{Class: socketcan.CAN_ERR_TX_TIMEOUT})
	_, err := p.Ctl.HandleInterrupt(p)
	return err
}

const (
	healthEvery = int64(time.Second)
	backoffMin  = int64(100 * time.Millisecond)
	backoffMax  = int64(10 * time.Second)
)

// health runs the idle-time chip check when it is due and returns when the next is.
func (p *Port) health(now int64) int64 {
	if p.down {
		if now >= p.retryAt {
			p.retry()
		}
		return p.retryAt
	}
	if p.busOff || now < p.healthAt {
		return p.healthAt
	}
	p.healthAt = now + healthEvery
	if err := p.Ctl.Check(); err != nil {
		p.chipLost(err)
	}
	return p.healthAt
}

// chipLost counts and logs a chip that reset itself or stopped answering, and
// re-initialises it; if that fails the port goes down and retries with back-off.
// Frames from the socket wait meanwhile (the socket queue is the buffer).
func (p *Port) chipLost(why error) {
	p.M.ChipResets.Inc()
	p.log("chip lost; re-initialising", "controller", p.Name, "cause", why.Error())
	if p.restartOrDown(false) {
		p.log("chip re-initialised", "controller", p.Name)
	}
}

// restartOrDown restarts the controller; if the chip does not answer, the port goes
// down and is retried with back-off instead of stopping cand. It reports success.
func (p *Port) restartOrDown(announce bool) bool {
	if err := p.restart(announce); err != nil {
		p.down = true
		p.backoff = backoffMin
		p.retryAt = mono.Now() + p.backoff
		p.log("chip does not answer; retrying with back-off", "controller", p.Name, "err", err.Error())
		return false
	}
	return true
}

func (p *Port) retry() {
	if err := p.restart(false); err != nil {
		p.backoff = min(2*p.backoff, backoffMax)
		p.retryAt = mono.Now() + p.backoff
		return
	}
	p.down = false
	p.healthAt = mono.Now() + healthEvery
	p.log("chip back; bridging again", "controller", p.Name)
}

func (p *Port) log(msg string, args ...any) {
	if p.Log != nil {
		p.Log(msg, args...)
	}
}
