package bridge

import (
	"sync/atomic"
	"time"

	"cand/hw/gpio"
	"cand/internal/mono"
	"cand/mcp2515"
	"cand/metrics"
)

// PortConfig is everything a port is built from.
type PortConfig struct {
	Name string
	Ctl  *mcp2515.Controller
	// SPI is the transport Ctl was built on (per-interrupt CS timing, probe pins).
	SPI *SPI
	// Int is the INT level (the GPIO level register): the line Ctl was built with.
	Int mcp2515.IntLine
	// IntFd delivers the INT line's edge events (struct gpio_v2_line_event records):
	// the GPIO character device's line request fd, or the simulator's pipe.
	IntFd int
	// SockFd is the raw CAN socket (or, in tests, one end of a SOCK_SEQPACKET pair).
	SockFd  int
	Metrics *metrics.Controller
	// ErrorFrames: send SocketCAN error frames for state changes and overflows.
	ErrorFrames bool
	// RestartNs is how long after bus-off the controller is restarted (like the
	// kernel's restart-ms); 0 = only on request (Owner.Restart).
	RestartNs int64
	// TxTimeoutNs aborts the pending frames when the oldest has waited this long
	// for the bus (0 = never).
	TxTimeoutNs int64
	// PollWindow is how long to keep watching the INT level after an interrupt
	// before sleeping in epoll_wait again (0 = off). Bounded: on a single-core
	// board it never starves the rest.
	PollWindow time.Duration
	// Clock is the board's time, which every deadline and latency of the port is
	// read in and INT edge events are stamped in (nil: CLOCK_MONOTONIC, a real Pi's).
	Clock mono.Clock
	// Inline writes each frame to the socket as soon as it is read, and reads the
	// INT line's events before the drain: the frame path before the chip came
	// first, kept to measure the two side by side (realtime.delivery: inline).
	Inline bool
	// Log reports faults (chip lost, interface down, INT stuck, a socket error);
	// Info reports recoveries (chip back, interface up). Neither is called per frame.
	Log, Info func(msg string, args ...any)
}

// Port is one MCP2515 with its interrupt line and its SocketCAN socket. Name, Ctl
// and M are what the port was built with, for reading.
type Port struct {
	Name string
	Ctl  *mcp2515.Controller
	M    *metrics.Controller

	// From PortConfig (see there).
	spi         *SPI
	intFd       int
	sockFd      int
	errorFrames bool
	restartNs   int64
	txTimeoutNs int64
	pollWindow  time.Duration
	clock       mono.Clock
	logf, infof func(msg string, args ...any)

	// intr is the INT level as the loop sees it: PortConfig.Int through gate, which
	// hides it while the port is not bridging or the line is stuck (storm.go). The
	// controller reads the line itself.
	intr mcp2515.IntLine
	gate intGate
	// INT storm (storm.go): idle counts interrupts in a row that left INT low with
	// nothing flagged; storm is set once there were stormAfter of them.
	idle  int
	storm bool

	// RX (rx.go, deliver.go)
	ring        *rxRing   // frames from the chip's drain to the socket (ring.go)
	lossPending bool      // the full ring lost frames: an overflow error frame is due
	owed        int       // entries queued since deliver last ran: it writes at least these
	inline      bool      // PortConfig.Inline
	nev         int       // events readEdges read into ev
	dt          *Delivery // the delivery thread, while it runs (nil: the owner writes)
	// lateErr is a socket write error the delivery thread met, for the owner
	// to classify (deliveryErr).
	lateErr atomic.Pointer[error]
	edgeNs  int64 // when the INT assertion being drained was seen (0: unknown yet)
	// drainAt, handledAt: when the last drain began and ended; releasedBefore:
	// releasedNs when it began. readEdges pairs edges with them.
	drainAt, handledAt, releasedBefore int64
	// releasedNs is when an interrupt was last handled to the end (INT high): an
	// edge stamped before it was already handled (e.g. by the poll window).
	releasedNs int64
	evBuf      [16 * gpio.EventSize]byte
	ev         [16]gpio.Event
	seq        gpio.SeqTracker
	stuck      bool   // INT still asserted after HandleInterrupt's bound
	uncertain  uint64 // Ctl.Stats().RXOrderUncertain already exported
	invalid    uint64 // Ctl.Stats().RXInvalidReads already exported

	// TX (tx.go)
	sockReadable bool     // edge-triggered: set on EPOLLIN, cleared on EAGAIN
	txReadNs     [3]int64 // when each TX buffer's frame was read from the socket
	txBuf        [16]byte
	drops        uint32 // SO_RXQ_OVFL: kernel's drop count for our receive queue
	lastDrops    uint32
	txBits       [3]uint32 // canwire.Bits of each TX buffer's frame, counted once it is sent
	// refill: a drain is running, so TXFreed may load the buffers its passes
	// free (refillInInterrupt).
	refill interruptRefill

	// Error frames (errorframe.go)
	errBuf [16]byte

	// Recovery (recovery.go)
	needReinit bool
	// busOff: the controller left the bus; it is held in Configuration mode (which
	// also stops the MCP2515's own recovery) until restartAt (0 = manual restart).
	busOff    bool
	held      bool
	restartAt int64
	// Bus-off restarts are rate-limited: restartDelay is the last delay used,
	// restartedAt when the controller was last restarted after bus-off.
	restartDelay int64
	restartedAt  int64
	// Chip health: checked when idle every healthEvery; a chip that does not
	// answer puts the port down, retried with a doubling back-off.
	healthAt int64
	down     bool
	retryAt  int64
	backoff  int64

	// Link (link.go): linkWant is what the link watch posted (Owner.SetLink),
	// linkHave what the port acts on; newSock is a socket handed over by
	// Owner.ReplaceSocket, + 1 (0: none).
	linkWant atomic.Int32
	linkHave LinkState
	newSock  atomic.Int64
	ep       int    // the owner's epoll set, for a replaced socket
	index    int    // the port's place in Owner.Ports (its epoll user data)
	owner    *Owner // for Owner.check, once the port failed
	linkErrs bool   // a link error from the socket was logged in this episode

	kernel meter // the owner's Kernel (syscall.go)

	// Socket errors (sockerr.go): failed is set for good when the socket failed
	// for a cause no retry mends; failure says which.
	failed  bool
	failure error
}

var _ mcp2515.Sink = (*Port)(nil)

// NewPort wires a controller to its INT line and socket.
func NewPort(c PortConfig) *Port {
	p := &Port{
		Name:        c.Name,
		Ctl:         c.Ctl,
		M:           c.Metrics,
		spi:         c.SPI,
		intFd:       c.IntFd,
		sockFd:      c.SockFd,
		errorFrames: c.ErrorFrames,
		restartNs:   c.RestartNs,
		txTimeoutNs: c.TxTimeoutNs,
		pollWindow:  c.PollWindow,
		clock:       c.Clock,
		logf:        c.Log,
		infof:       c.Info,
		ep:          -1,
		ring:        newRing(RingFrames),
		inline:      c.Inline,
	}
	p.gate.line = c.Int
	p.gate.clock = c.Clock
	p.intr = &p.gate
	return p
}

func (p *Port) log(msg string, args ...any) {
	if p.logf != nil {
		p.logf(msg, args...)
	}
}

func (p *Port) info(msg string, args ...any) {
	if p.infof != nil {
		p.infof(msg, args...)
	}
}

// bridging reports whether the port moves frames: its interface up, its chip
// answering, its socket working. A bus-off controller is bridging (held off the
// bus until its restart).
func (p *Port) bridging() bool { return p.linkHave == LinkUp && !p.down && !p.failed }
