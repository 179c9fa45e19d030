package socketcand

import (
	"errors"
	"log/slog"
	"os"
	"sync"
	"time"

	"go.einride.tech/can"

	"cand/socketcan"
	"cand/socketcand/protocol"
)

// bus is one bus's descriptor and the clients in raw mode on it.
type bus struct {
	name  string
	f     *os.File
	stats func() protocol.Stat
	log   *slog.Logger

	mu  sync.Mutex
	raw map[*client]struct{}
}

func newBus(b Bus, log *slog.Logger) *bus {
	stats := b.Stats
	if stats == nil {
		stats = func() protocol.Stat { return protocol.Stat{} }
	}
	// A non-blocking descriptor is served by the runtime's poller: a blocked
	// read or write ends when the file is closed.
	f := os.NewFile(uintptr(b.Fd), "socketcand "+b.Name)
	return &bus{name: b.Name, f: f, stats: stats, log: log, raw: map[*client]struct{}{}}
}

// run reads the bus's records until its descriptor is closed (or its other end),
// and offers each data and error frame to the raw-mode clients. Remote frames
// are not passed on: the protocol has no form for them (the reference server
// skips them too).
func (b *bus) run() {
	var rec [socketcan.FrameSize]byte
	for {
		n, err := b.f.Read(rec[:])
		if err != nil {
			if !errors.Is(err, os.ErrClosed) {
				b.log.Warn("socketcand: bus stopped", "bus", b.name, "err", err)
			}
			return
		}
		if n != socketcan.FrameSize || !b.hasRaw() {
			continue
		}
		if msg := message(&rec, time.Now()); msg != nil {
			b.offer(msg, nil)
		}
	}
}

// message is the protocol's message for a record received at t, or nil.
func message(rec *[socketcan.FrameSize]byte, t time.Time) []byte {
	f, kind := socketcan.Decode(rec)
	switch kind {
	case socketcan.FrameData:
		return protocol.AppendFrame(nil, f, t)
	case socketcan.FrameError:
		e, _ := socketcan.DecodeErrorFrame(rec)
		return protocol.AppendErrorFrame(nil, e, t)
	}
	return nil
}

func (b *bus) hasRaw() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.raw) > 0
}

// offer hands msg to every raw-mode client but except.
func (b *bus) offer(msg []byte, except *client) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for c := range b.raw {
		if c != except {
			c.offer(msg)
		}
	}
}

// join adds c to the raw-mode clients and queues ok for it, so that c gets
// every frame that follows its ok and none before. Should c's queue be full,
// ok waits for room outside the lock, and frames that come meanwhile are lost
// to c rather than the bus waiting for it.
func (b *bus) join(c *client, ok item) {
	b.mu.Lock()
	select {
	case c.out <- ok:
		b.raw[c] = struct{}{}
		b.mu.Unlock()
		return
	default:
	}
	b.mu.Unlock()
	c.enqueue(ok)
	b.mu.Lock()
	b.raw[c] = struct{}{}
	b.mu.Unlock()
}

func (b *bus) leave(c *client) {
	b.mu.Lock()
	delete(b.raw, c)
	b.mu.Unlock()
}

// send puts from's frame on the bus; it waits while the descriptor's queue is
// full (the back-pressure of cand's TX path). The other raw-mode clients see
// it, as other sockets on a SocketCAN interface see a socket's frames; the
// sender does not (CAN_RAW_RECV_OWN_MSGS off).
func (b *bus) send(from *client, f can.Frame) error {
	var rec [socketcan.FrameSize]byte
	socketcan.Encode(&rec, f)
	if _, err := b.f.Write(rec[:]); err != nil {
		return err
	}
	if b.hasRaw() {
		b.offer(protocol.AppendFrame(nil, f, time.Now()), from)
	}
	return nil
}
