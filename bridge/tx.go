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
// from pass to pass); their transfers are TX's, not the interrupt's RX transfers.
func (p *Port) TXFreed() {
	if !p.refill || p.refillErr != nil || (p.Ctl.PassFoundRX() && !p.inline) {
		// A pass that found RX buffers full: until a status read shows both
		// empty, the chip comes first and the socket is not read. The frame is
		// loaded after the drain (turn, pollWindow).
		return
	}
	p.spi.inInterrupt = false
	p.refillErr = p.pumpTX()
	p.spi.inInterrupt = true
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
