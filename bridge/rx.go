package bridge

import (
	"errors"
	"fmt"
	"math"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/canwire"
	"cand/hw/gpio"
	"cand/internal/kernelop"
	"cand/mcp2515"
	"cand/socketcan"
)

// intEvents runs when epoll finds the INT line's edge events readable. The chip
// comes first: with INT asserted the chip is drained before the events are read
// (a system call). Then the events are read (one read), each frame the drain
// found is paired with its edge, and the frames go to the socket (deliver.go).
func (p *Port) intEvents() error {
	if p.inline {
		return p.intEventsInline()
	}
	var err error
	drained := false
	if !p.down && p.intr.Asserted() {
		drained = true
		err = p.drain(0)
	}
	if rerr := p.readEdges(drained); err == nil {
		err = rerr
	}
	p.deliver()
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	return nil
}

// intEventsInline is intEvents on the inline path (PortConfig.Inline): the events
// first, then the drain, its frames written as they are read.
func (p *Port) intEventsInline() error {
	if err := p.readEdges(false); err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	edge := newestEdge(p.ev[:p.nev], 0, math.MaxInt64)
	if edge == 0 || p.down || !p.intr.Asserted() {
		return nil
	}
	if edge <= p.releasedNs {
		edge = 0 // stale: its interrupt was handled by polling
	}
	if err := p.interrupt(edge); err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	return nil
}

// interrupt handles an INT assertion found by a level read (a loop turn, the poll
// window), edgeNs being when it was seen (0: unknown): the chip is drained, then
// the frames go to the socket.
func (p *Port) interrupt(edgeNs int64) error {
	err := p.drain(edgeNs)
	p.deliver()
	return err
}

// drain services the chip from INT seen asserted until it is released:
// HandleInterrupt reads the status and the full RX buffers (each frame goes to
// Received, into the ring), and reports TX done and errors (storm.go: or one
// Poll, while the line is stuck). Nothing here makes a system call: frames and
// error frames wait in the ring, a TX buffer freed while RX buffers are full is
// loaded after the drain (TXFreed, refillInInterrupt), and the INT line's events
// are read after it.
func (p *Port) drain(edgeNs int64) error {
	p.spi.probe.interrupt(true)
	defer p.spi.probe.interrupt(false)
	start := p.clock.Now()
	p.M.Interrupts.Inc()
	p.drainAt, p.releasedBefore = start, p.releasedNs
	if edgeNs != 0 {
		p.M.IntToHandler.Observe(start - edgeNs)
	}
	p.edgeNs = edgeNs
	p.spi.BeginInterrupt(start)
	p.refill.begin()
	done, err := p.service()
	if rerr := p.refill.end(); err == nil {
		err = rerr
	}
	p.exportRXStats()
	p.spi.EndInterrupt()
	p.edgeNs = 0
	if errors.Is(err, mcp2515.ErrNoChip) {
		// The chip stopped answering (MISO floats): recovery, not the end of cand.
		p.chipLost(err)
		return nil
	}
	if err != nil {
		return err
	}
	p.stuck = !done
	end := p.clock.Now()
	if done {
		p.releasedNs = end
	}
	p.handledAt = end
	if edgeNs != 0 {
		p.M.IntHandled.Observe(end - edgeNs)
	}
	return p.afterInterrupt()
}

// readEdges reads the INT line's queued edge events (one read). After a drain
// (drained), the drain's interrupt and its frames are paired with their edges:
// each frame with the newest falling edge stamped before its status pass began,
// the interrupt with the newest before the drain began. An edge stamped before
// the previous interrupt ended (releasedBefore) was that interrupt's, handled by
// polling: it pairs with nothing.
func (p *Port) readEdges(drained bool) error {
	p.kernel.enter(kernelop.EventRead)
	n, err := gpio.ReadEvents(p.intFd, p.evBuf[:], p.ev[:])
	p.kernel.exit(kernelop.EventRead)
	if err != nil && n == 0 {
		if err == unix.EAGAIN {
			return nil
		}
		return fmt.Errorf("reading INT events: %w", err)
	}
	for k := range n {
		if lost := p.seq.Observe(&p.ev[k]); lost != 0 {
			p.M.IntEventsLost.Add(uint64(lost))
		}
	}
	p.M.IntEdges.Add(uint64(n))
	p.nev = n
	if !drained {
		return nil
	}
	edges := p.ev[:n]
	if edge := newestEdge(edges, p.releasedBefore, p.drainAt); edge != 0 {
		p.M.IntToHandler.Observe(p.drainAt - edge)
		p.M.IntHandled.Observe(p.handledAt - edge)
	}
	from, to := p.ring.written()
	for i := from; i != to; i++ {
		if e := p.ring.at(i); e.edgeNs == 0 && !e.isErr {
			e.edgeNs = newestEdge(edges, p.releasedBefore, e.readNs)
		}
	}
	return nil
}

// newestEdge is the timestamp of the newest falling edge in evs stamped after
// after and at or before by (0: none).
func newestEdge(evs []gpio.Event, after, by int64) int64 {
	var edge int64
	for k := range evs {
		e := &evs[k]
		if t := int64(e.TimestampNs); e.ID == gpio.EventFallingEdge && t > after && t <= by && t > edge {
			edge = t
		}
	}
	return edge
}

// exportRXStats adds the controller's RX counters that grew since the last call to
// their metrics.
func (p *Port) exportRXStats() {
	st := p.Ctl.Stats()
	if st.RXOrderUncertain != p.uncertain {
		p.M.RXOrderUncertain.Add(st.RXOrderUncertain - p.uncertain)
		p.uncertain = st.RXOrderUncertain
	}
	if st.RXInvalidReads != p.invalid {
		p.M.RXInvalidReads.Add(st.RXInvalidReads - p.invalid)
		p.invalid = st.RXInvalidReads
	}
}

// Received implements mcp2515.Sink: the frame goes into the ring, to be written
// to the socket once the chip is empty (deliver.go). A full ring loses it,
// counted and reported (ringFull).
func (p *Port) Received(f *can.Frame) {
	p.reportLoss()
	e := p.slot()
	if e == nil {
		p.M.RXBits.Add(uint64(canwire.Bits(f))) // it took the bus all the same
		p.ringFull()
		return
	}
	socketcan.Encode(&e.rec, *f)
	e.data, e.isErr = f.Length, false
	e.readNs, e.edgeNs = p.Ctl.StatusAt(), p.edgeNs
	e.pushNs = p.clock.Now()
	p.ring.commit()
	p.owed++
	p.M.RXChipToRing.Observe(e.pushNs - e.readNs)
	if p.inline {
		p.deliverAll()
	}
}

// slot is the ring's next entry, or nil if it is full, after the virtual Pi's
// delivery thread caught up where the board's would have (Delivery.catchUp).
func (p *Port) slot() *rxEntry {
	e := p.ring.slot()
	if e == nil && p.dt != nil && p.dt.catchUp(p.ring) {
		e = p.ring.slot()
	}
	return e
}

func (p *Port) BothFull(ns int64) { p.M.BothRXFull.Observe(ns) }
