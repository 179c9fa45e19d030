package soc

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"cand/hw/gpio"
)

// DefaultEdgeBuffer is the kernel's default event buffer for a one-line request
// (16 events per line, gpiolib-cdev).
const DefaultEdgeBuffer = 16

// EdgeLine plays the kernel GPIO character device's part for one simulated
// interrupt line: the driver epolls Fd and reads 48-byte struct gpio_v2_line_event
// records from it, exactly as from a line request fd.
//
// Edge is called by whatever drives the line (e.g. the MCP2515 model's INT output)
// with the level and the time of the change. A falling edge queues a
// GPIO_V2_LINE_EVENT_FALLING_EDGE event stamped with that time; a rising edge does
// too if WatchRising(true). Seqno and LineSeqno count every event, delivered or
// not. When Buffer events are already unread the new event is dropped and counted;
// the kernel drops the oldest instead, but either way the reader sees the gap in
// the sequence numbers. Edge and Close are safe for concurrent use.
type EdgeLine struct {
	mu      sync.Mutex
	r, w    int
	offset  uint32
	level   bool
	rising  bool
	buffer  int
	seqno   uint32
	dropped uint64
	closed  bool
	hold    [DefaultEdgeBuffer][gpio.EventSize]byte
	held    int
}

var _ gpio.EventSource = (*EdgeLine)(nil)

// NewEdgeLine makes the line for GPIO offset (idle high, as an open-drain INT with
// a pull-up) with a non-blocking pipe behind Fd.
func NewEdgeLine(offset uint32) (*EdgeLine, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("sim/soc: edge line pipe: %w (out of file descriptors? raise the fd limit)", err)
	}
	return &EdgeLine{r: p[0], w: p[1], offset: offset, level: true, buffer: DefaultEdgeBuffer}, nil
}

// Fd is the read end the driver epolls and reads events from.
func (l *EdgeLine) Fd() int { return l.r }

// Offset is the line offset put in every event.
func (l *EdgeLine) Offset() uint32 { return l.offset }

// WatchRising makes rising edges queue events too (falling ones always do).
func (l *EdgeLine) WatchRising(on bool) {
	l.mu.Lock()
	l.rising = on
	l.mu.Unlock()
}

// SetBuffer sets how many unread events the line holds before dropping (≥ 1).
func (l *EdgeLine) SetBuffer(events int) {
	l.mu.Lock()
	l.buffer = max(events, 1)
	l.mu.Unlock()
}

// Level is the line's current level.
func (l *EdgeLine) Level() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.level
}

// Dropped counts events lost to a full buffer.
func (l *EdgeLine) Dropped() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropped
}

// Edge records the line's level at time at (CLOCK_MONOTONIC ns) and queues an
// event if that is an edge being watched. A repeated level is no edge.
func (l *EdgeLine) Edge(level bool, at int64) {
	l.Hold(level, at)
	l.Flush()
}

// Hold records an edge like Edge but keeps its event until Flush: the writer of
// the event wakes the reader, which should not find the writer still holding a
// lock the reader needs.
func (l *EdgeLine) Hold(level bool, at int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || level == l.level {
		return
	}
	l.level = level
	id := uint32(gpio.EventFallingEdge)
	if level {
		if !l.rising {
			return
		}
		id = gpio.EventRisingEdge
	}
	l.seqno++
	if l.held == len(l.hold) {
		l.dropped++
		return
	}
	ev := gpio.Event{TimestampNs: uint64(at), ID: id, Offset: l.offset, Seqno: l.seqno, LineSeqno: l.seqno}
	ev.Encode(l.hold[l.held][:])
	l.held++
}

// Flush writes the held events into the pipe (dropping, and counting, those that
// would exceed Buffer unread events).
func (l *EdgeLine) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		l.held = 0
		return
	}
	for i := range l.held {
		// TIOCINQ is FIONREAD on Linux: the bytes unread in the pipe.
		if queued, err := unix.IoctlGetInt(l.w, unix.TIOCINQ); err == nil && queued/gpio.EventSize >= l.buffer {
			l.dropped++
			continue
		}
		if _, err := unix.Write(l.w, l.hold[i][:]); err != nil {
			l.dropped++
		}
	}
	l.held = 0
}

// Close closes both ends of the pipe. Later edges are ignored.
func (l *EdgeLine) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	return errors.Join(unix.Close(l.r), unix.Close(l.w))
}
