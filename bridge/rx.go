package bridge

import (
	"errors"
	"fmt"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/canwire"
	"cand/hw/gpio"
	"cand/internal/kernelop"
	"cand/mcp2515"
	"cand/socketcan"
)

// intEvents reads the INT line's queued edge events (one read) and handles the
// interrupt with the newest edge's kernel timestamp. If the level is already high,
// the poll window or a previous pass has handled it: no SPI transfer is spent.
func (p *Port) intEvents() error {
	p.kernel.enter(kernelop.EventRead)
	n, err := gpio.ReadEvents(p.intFd, p.evBuf[:], p.ev[:])
	p.kernel.exit(kernelop.EventRead)
	if err != nil && n == 0 {
		if err == unix.EAGAIN {
			return nil
		}
		return fmt.Errorf("%s: reading INT events: %w", p.Name, err)
	}
	var edge int64
	for k := range n {
		e := &p.ev[k]
		if e.ID == gpio.EventFallingEdge {
			edge = int64(e.TimestampNs)
		}
		if lost := p.seq.Observe(e); lost != 0 {
			p.M.IntEventsLost.Add(uint64(lost))
		}
	}
	p.M.IntEdges.Add(uint64(n))
	if edge == 0 || p.down || !p.intr.Asserted() {
		return nil
	}
	if edge <= p.releasedNs {
		// A stale edge (its interrupt was handled by polling): INT is low again for
		// a newer frame whose edge has not been read yet. Handle it, but do not
		// pair its latency with the old timestamp.
		edge = 0
	}
	if err := p.interrupt(edge); err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	return nil
}

// interrupt handles one INT assertion whose edge the kernel stamped at edgeNs:
// HandleInterrupt reads the status and the full RX buffers (each frame goes to
// Received), and reports TX done and errors (storm.go: or one Poll, while the line
// is stuck).
func (p *Port) interrupt(edgeNs int64) error {
	p.spi.probe.interrupt(true)
	defer p.spi.probe.interrupt(false)
	start := p.clock.Now()
	p.M.Interrupts.Inc()
	p.edgeNs = edgeNs
	if edgeNs != 0 {
		p.M.IntToHandler.Observe(start - edgeNs)
	}
	p.spi.BeginInterrupt(start)
	p.refill = true
	done, err := p.service()
	p.refill = false
	if rerr := p.refillErr; rerr != nil {
		p.refillErr = nil
		if err == nil {
			err = rerr
		}
	}
	p.exportRXStats()
	if errors.Is(err, mcp2515.ErrNoChip) {
		// The chip stopped answering (MISO floats): recovery, not the end of cand.
		p.spi.EndInterrupt()
		p.edgeNs = 0
		p.chipLost(err)
		return nil
	}
	if err != nil {
		return err
	}
	p.spi.EndInterrupt()
	p.stuck = !done
	if done {
		p.releasedNs = p.clock.Now()
	}
	if edgeNs != 0 {
		p.M.IntHandled.Observe(p.clock.Now() - edgeNs)
	}
	p.edgeNs = 0
	return p.afterInterrupt()
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

// Received implements mcp2515.Sink: the frame is written to the socket at once.
func (p *Port) Received(f *can.Frame) {
	socketcan.Encode(&p.rxBuf, *f)
	p.spi.probe.socketWrite(true)
	p.kernel.enter(kernelop.SocketWrite)
	err := socketcan.WriteFrame(p.sockFd, &p.rxBuf)
	p.kernel.exit(kernelop.SocketWrite)
	p.spi.probe.socketWrite(false)
	// The frame took the bus whether or not the socket takes it: bus load.
	p.M.RXBits.Add(uint64(canwire.Bits(f)))
	if err != nil {
		// vcan does not block; ENOBUFS or EAGAIN mean the host side could not take
		// it. Counted, never silent.
		p.writeErr(err)
		return
	}
	now := p.clock.Now()
	p.M.RXFrames.Inc()
	p.M.RXBytes.Add(uint64(f.Length))
	if p.edgeNs != 0 {
		p.M.RXEndToEnd.Observe(now - p.edgeNs)
	}
}

// BothFull implements mcp2515.Sink.
func (p *Port) BothFull(ns int64) { p.M.BothRXFull.Observe(ns) }
