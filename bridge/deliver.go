package bridge

import (
	"cand/canwire"
	"cand/internal/kernelop"
	"cand/internal/mono"
	"cand/socketcan"
)

// deliver publishes what the drain put in the ring and writes it to the socket,
// oldest first: received frames and error frames in bus order. It writes at least
// as many entries as were queued since its last call (owed), so the ring cannot
// grow while the chip keeps INT low (a bus faster than the drain); beyond those,
// the chip comes first: once INT is asserted again deliver stops, and the next
// drain runs before it resumes (a loop turn, the poll window). So a frame waiting
// in the chip waits for at most the writes of the previous drain's frames (one or
// two as a rule), and one call writes at most the ring's length.
func (p *Port) deliver() { p.deliverWhile(true) }

// deliverAll writes everything in the ring, whatever INT says: on the way out,
// once the controller has left the bus (and the delivery thread has stopped).
func (p *Port) deliverAll() { p.deliverWhile(false) }

func (p *Port) deliverWhile(chipFirst bool) {
	if h := int64(p.ring.high); h > p.M.RXRingHighWater.Load() {
		p.M.RXRingHighWater.Set(h)
	}
	if p.dt != nil {
		// The delivery thread writes: publish, and wake it if it parked, but
		// for an isolated frame, which the owner writes itself (isolated.go).
		p.reportLoss()
		p.ring.publish()
		p.owed = 0
		if p.ring.waiting() > 0 && !p.dt.writeIsolated(p) {
			p.dt.wake()
		}
		p.deliveryErr()
		return
	}
	owed := p.owed
	p.owed = 0
	for ; ; owed-- {
		p.reportLoss()
		p.ring.publish()
		e := p.ring.peek()
		if e == nil {
			return
		}
		if chipFirst && owed <= 0 && p.intr.Asserted() {
			return
		}
		if err := p.write(e, p.kernel, p.clock); err != nil {
			p.writeErr(err)
		}
		p.ring.pop()
	}
}

// write writes one ring entry to the socket and counts it, on the thread that
// consumes the ring (the owner, or the delivery thread with its meter and clock).
// A failed write is the caller's to count: vcan does not block, so ENOBUFS or
// EAGAIN mean the host side could not take it.
func (p *Port) write(e *rxEntry, k meter, clk mono.Clock) error {
	if !e.isErr {
		// The frame took the bus whether or not the socket takes it: bus load,
		// counted here rather than in the drain (its stuff bits and CRC are
		// arithmetic the chip's deadline need not wait for).
		f, _ := socketcan.Decode(&e.rec)
		p.M.RXBits.Add(uint64(canwire.Bits(&f)))
	}
	p.spi.probe.socketWrite(true)
	k.enter(kernelop.SocketWrite)
	err := socketcan.WriteFrame(p.sockFd, &e.rec)
	k.exit(kernelop.SocketWrite)
	p.spi.probe.socketWrite(false)
	if err != nil {
		return err
	}
	if e.isErr {
		p.M.ErrorFrames.Inc()
		return nil
	}
	now := clk.Now()
	p.M.RXFrames.Inc()
	p.M.RXBytes.Add(uint64(e.data))
	p.M.RXRingToSocket.Observe(now - e.pushNs)
	if e.edgeNs != 0 {
		p.M.RXEndToEnd.Observe(now - e.edgeNs)
	}
	return nil
}

// ringFull counts a received frame the full ring could not take: lost, like a
// frame the chip drops when both RX buffers are full, and reported the same way
// (an RX overflow error frame, once the ring has room: reportLoss).
func (p *Port) ringFull() {
	p.M.RXRingDrops.Inc()
	p.lossPending = true
}

// reportLoss puts the RX overflow error frame for frames the full ring lost
// into the ring, once it has room, after the frames that came before them.
func (p *Port) reportLoss() {
	if !p.lossPending || p.ring.slot() == nil {
		return
	}
	p.lossPending = false
	ef := socketcan.ErrorFrame{Class: socketcan.CAN_ERR_CRTL | socketcan.CAN_ERR_CNT}
	ef.Data[1] = socketcan.CAN_ERR_CRTL_RX_OVERFLOW
	ef.Data[6], ef.Data[7] = byte(p.M.TEC.Load()), byte(p.M.REC.Load())
	p.sendError(&ef)
}

// sendError queues an error frame (if error frames are on) behind the frames
// received before it; deliver writes it.
func (p *Port) sendError(ef *socketcan.ErrorFrame) {
	if !p.errorFrames {
		return
	}
	e := p.slot()
	if e == nil {
		p.M.RXRingDrops.Inc()
		return
	}
	ef.Encode(&e.rec)
	e.data, e.isErr, e.edgeNs = 0, true, 0
	p.ring.commit()
	p.owed++
	if p.inline {
		p.deliverAll()
	}
}
