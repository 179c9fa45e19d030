package bridge

import (
	"errors"

	"cand/canwire"
	"cand/internal/kernelop"
	"cand/mcp2515"
	"cand/socketcan"
)

// pumpTX moves frames from the socket to free TX buffers. A frame is read only
// when a buffer can take it, so frames wait in the socket's receive queue (the
// back-pressure) rather than being dropped. The socket is edge-triggered in epoll:
// sockReadable stays set until a read returns EAGAIN.
func (p *Port) pumpTX() error {
	// Off the bus, frames wait in the socket queue until the restart.
	for p.sockReadable && !p.busOff && p.bridging() && p.Ctl.TxFree() {
		p.kernel.enter(kernelop.SocketRead)
		_, err := socketcan.ReadFrame(p.sockFd, &p.txBuf, &p.drops)
		p.kernel.exit(kernelop.SocketRead)
		if err != nil {
			// By its cause (sockerr.go): back-pressure, a link event, a bad
			// record, or the end of this port's bridging.
			if !p.readErr(err) {
				break
			}
			continue
		}
		readNs := p.clock.Now()
		if p.drops != p.lastDrops {
			// The kernel dropped frames for our receive queue (SO_RXQ_OVFL): the
			// queue (interface.rcvbuf) was too small for the burst.
			p.M.SocketDrops.Add(uint64(p.drops - p.lastDrops))
			p.lastDrops = p.drops
		}
		f, kind := socketcan.Decode(&p.txBuf)
		if !kind.Valid() {
			p.M.TXInvalid.Inc()
			continue
		}
		buf, err := p.Ctl.Transmit(&f)
		if err != nil {
			p.M.TXDropped.Inc()
			return err
		}
		p.txReadNs[buf] = readNs
		p.txBits[buf] = canwire.Bits(&f)
		p.M.TXBytes.Add(uint64(f.Length))
		p.M.TXSocketToRTS.Observe(p.clock.Now() - readNs)
	}
	return nil
}

// Transmitted implements mcp2515.Sink: the TX-done interrupt freed buf.
func (p *Port) Transmitted(buf int) {
	now := p.clock.Now()
	p.M.TXFrames.Inc()
	p.M.TXBits.Add(uint64(p.txBits[buf]))
	if t := p.txReadNs[buf]; t != 0 {
		p.M.TXSocketToDone.Observe(now - t)
		p.txReadNs[buf] = 0
	}
}

// TXFreed implements mcp2515.Sink: a pass of the interrupt being handled freed TX
// buffers. If that pass read both RX buffers empty, frames waiting in the socket
// are loaded now rather than after the interrupt's last pass (INT may stay low
// from pass to pass): refillInInterrupt. A pass that found RX buffers full leaves
// them to the loading after the drain (turn, pollWindow): until a status read
// shows both empty, the chip comes first and the socket is not read.
func (p *Port) TXFreed() {
	if p.refill.open() && (!p.Ctl.PassFoundRX() || p.inline) {
		p.refillInInterrupt()
	}
}

// refillInInterrupt is the TX refill between two status passes of a drain: the
// frames waiting in the socket go into the freed buffers. Its transfers are TX's,
// not the interrupt's RX transfers (SPI.BeginRefill). An error ends the drain's
// refills and is the drain's error (interruptRefill.end).
func (p *Port) refillInInterrupt() {
	p.spi.BeginRefill()
	err := p.pumpTX()
	p.spi.EndRefill()
	p.refill.failed(err)
}

// interruptRefill is whether a drain is running, so that TXFreed may refill, and
// the first error of its refills.
type interruptRefill struct {
	running bool
	err     error
}

// begin opens the refills of a drain.
func (r *interruptRefill) begin() { r.running, r.err = true, nil }

// open reports whether a refill may run now: a drain is running and no refill
// of it failed.
func (r *interruptRefill) open() bool { return r.running && r.err == nil }

// failed records a refill's error (nil: none).
func (r *interruptRefill) failed(err error) { r.err = err }

// end closes the drain's refills and returns their error.
func (r *interruptRefill) end() error {
	err := r.err
	*r = interruptRefill{}
	return err
}

// TxFailed implements mcp2515.Sink: the frame was aborted (TX timeout) or failed in
// one-shot mode. Counted, never silent.
func (p *Port) TxFailed(buf int) {
	p.M.TXDropped.Inc()
	p.txReadNs[buf] = 0
}

// txDeadline is when the oldest pending frame times out (0: none pending, or no
// timeout).
func (p *Port) txDeadline() int64 {
	if p.txTimeoutNs == 0 || p.busOff {
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
	return oldest + p.txTimeoutNs
}

// txTimeout aborts every pending frame (ABAT), reports CAN_ERR_TX_TIMEOUT, and
// services the chip once so the aborted buffers are released.
func (p *Port) txTimeout() error {
	if err := p.Ctl.Abort(); err != nil {
		return err
	}
	p.sendError(&socketcan.ErrorFrame{Class: socketcan.CAN_ERR_TX_TIMEOUT})
	_, err := p.Ctl.HandleInterrupt(p)
	if errors.Is(err, mcp2515.ErrNoChip) {
		p.chipLost(err)
		return nil
	}
	return err
}
