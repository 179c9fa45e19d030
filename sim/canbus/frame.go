package canbus

import "go.einride.tech/can"

// The frame state machine, driven by the bus's timers: Kick arms the start of
// frame; startOfFrame arbitrates among the nodes with a pending frame (or arms an
// injected error); ackSlot decides ACK or an ACK error; endOfFrame delivers;
// errorFrame ends a destroyed frame; finish arms the next start of frame after the
// intermission. Lengths are the stuffed bit counts of bits.go.

// candidate is a node's answer to Pending at the current start of frame.
type candidate struct {
	f  can.Frame
	ok bool
}

// onWire is the frame on the bus.
type onWire struct {
	f   can.Frame
	tx  int // transmitting node, -1 if none
	sof int64
	len int // stuffed SOF..CRC bits
}

// Kick tells the bus a node has a frame to send from time at on. Lock held.
func (b *Bus) Kick(at int64) {
	if b.bitrate == 0 || b.stuck || b.busy || b.sof.Armed() {
		return
	}
	if at < b.idleAt {
		at = b.idleAt
	}
	b.Schedule(b.sof, at)
}

// startOfFrame runs arbitration among the nodes with a pending frame.
func (b *Bus) startOfFrame(at int64) {
	if b.stuck {
		return
	}
	win := -1
	var key uint32
	for i := range b.nodes {
		f, ok := b.nodes[i].n.Pending(at)
		b.cands[i] = candidate{f: f, ok: ok}
		if !ok {
			continue
		}
		if k := arbKey(f); win < 0 || k < key {
			win, key = i, k
		}
	}
	if win < 0 {
		b.busy = false
		return
	}
	b.busy = true
	b.goDominant(at)
	for i := range b.cands {
		if b.cands[i].ok && i != win {
			b.stats.ArbLosses++
			b.nodes[i].n.TxLost(at)
		}
	}
	f := b.cands[win].f
	b.cur.f, b.cur.tx, b.cur.sof, b.cur.len = f, win, at, stuffedLen(f)
	b.stats.LastSOF = at
	b.nodes[win].n.TxStart(at)
	b.emit(Event{Kind: EvSOF, At: at, Frame: f, From: win, Bits: b.cur.len + tailBits})
	garbled := b.nodes[win].g != nil && b.nodes[win].g.Garbled(at)
	if garbled || (b.errLeft > 0 && at >= b.errFrom) {
		if !garbled {
			b.errLeft--
		}
		// The error hits after the control field (unstuffed position).
		pos := 19
		if f.IsExtended {
			pos = 39
		}
		b.errKind = BitError
		b.Schedule(b.errT, at+b.Bits(pos))
		return
	}
	b.idleAt = at + b.Bits(b.cur.len+tailBits)
	b.Schedule(b.ack, at+b.Bits(b.cur.len+ackSlotEnd))
}

// ackSlot: at the end of the ACK slot the transmitter knows whether anyone ACKed.
func (b *Bus) ackSlot(at int64) {
	acked := false
	if !(at >= b.noAckFrom && at < b.noAckTo) {
		for i := range b.nodes {
			if i != b.cur.tx && b.nodes[i].n.Acks(at) {
				acked = true
				break
			}
		}
	}
	if acked {
		b.goRecessive(at) // ACK delimiter + EOF + intermission: 11 recessive bits
		b.Schedule(b.eof, b.cur.sof+b.Bits(b.cur.len+eofEnd))
		return
	}
	b.errorFrame(AckError, FormError, at)
}

func (b *Bus) injectedError(at int64) { b.errorFrame(b.errKind, b.errKind, at) }

// errorFrame: the transmitter gets txErr, every other node rxErr; an error flag (6),
// delimiter (8) and intermission (3) follow.
func (b *Bus) errorFrame(txErr, rxErr ErrorKind, at int64) {
	tx := b.cur.tx
	b.destroy(txErr, rxErr, at)
	b.emit(Event{Kind: EvError, At: at, Frame: b.cur.f, From: tx, Err: txErr})
	b.finish(at + b.Bits(errorBits+ifsBits))
	b.goRecessive(at + b.Bits(6))
}

// destroy counts an error in the current frame: its transmitter gets txErr, every
// other node rxErr.
func (b *Bus) destroy(txErr, rxErr ErrorKind, at int64) {
	tx := b.cur.tx
	b.stats.Errors++
	b.nodes[tx].n.TxError(txErr, at)
	for i := range b.nodes {
		if i != tx {
			b.nodes[i].n.RxError(rxErr, at)
		}
	}
}

// finish ends the current frame: the bus is busy until idle, then the next SOF.
func (b *Bus) finish(idle int64) {
	b.stats.BusyNs += idle - b.cur.sof
	b.idleAt = idle
	b.cur.tx = -1
	b.Schedule(b.sof, idle)
}

// endOfFrame delivers the frame: receivers first, then the transmitter's TxDone.
func (b *Bus) endOfFrame(at int64) {
	tx, f := b.cur.tx, b.cur.f
	for i := range b.nodes {
		if i != tx {
			b.nodes[i].n.Receive(f, at)
		}
	}
	b.nodes[tx].n.TxDone(at)
	b.stats.Frames++
	b.stats.LastFrameE = at
	b.emit(Event{Kind: EvFrame, At: at, Frame: f, From: tx, Bits: b.cur.len + tailBits})
	b.finish(b.cur.sof + b.Bits(b.cur.len+tailBits))
}
