package mcpchip

import (
	"go.einride.tech/can"

	"cand/sim/canbus"
)

// Transmit side (datasheet §3): three buffers, TXP priorities, abort, one-shot,
// loopback, and erratum 5's repeated frame.

// requestTx sets TXBnCTRL.TXREQ (WRITE, BIT MODIFY or RTS): ABTF, MLOA and TXERR clear.
func (c *Chip) requestTx(n int, at int64) {
	a := txBase(n)
	if c.r[a]&txbTXREQ != 0 {
		return
	}
	c.r[a] = c.r[a]&^(txbABTF|txbMLOA|txbTXERR) | txbTXREQ
	c.abortReq[n] = false
	if c.r[regCANCTRL]&canctrlABAT != 0 {
		c.abortTx(n, at) // ABAT still set: nothing may start
		return
	}
	c.kickTx(at)
}

// abortTx: the MCU cleared TXREQ (or set ABAT). A buffer not on the wire is aborted
// at once (TXREQ clears, ABTF sets); one on the wire finishes its attempt and is not
// retried if it fails.
func (c *Chip) abortTx(n int, at int64) {
	a := txBase(n)
	if c.r[a]&txbTXREQ == 0 {
		return
	}
	if n == c.txBuf {
		c.abortReq[n] = true
		return
	}
	c.r[a] = c.r[a]&^txbTXREQ | txbABTF
	c.stats.Aborted++
	c.modeDone(at)
}

func (c *Chip) abortAll(at int64) {
	for n := 0; n < 3; n++ {
		c.abortTx(n, at)
	}
}

// pick is the buffer that goes next: TXREQ set, highest TXP, on a tie the highest
// buffer number (datasheet §3.2). -1 if none.
func (c *Chip) pick() int {
	best, bp := -1, uint8(0)
	for n := 0; n < 3; n++ {
		ctrl := c.r[txBase(n)]
		if ctrl&txbTXREQ == 0 || c.abortReq[n] {
			continue
		}
		if p := ctrl & txbTXP; best < 0 || p >= bp {
			best, bp = n, p
		}
	}
	return best
}

// txFrame is buffer n's frame. A DLC above 8 sends 8 data bytes (can.Frame holds 8).
func (c *Chip) txFrame(n int) can.Frame {
	a := txBase(n)
	id, ext := getID(c.r[a+bufSIDH : a+bufSIDH+4])
	dlc := c.r[a+bufDLC]
	l := dlc & dlcDLC
	if l > 8 {
		l = 8
	}
	f := can.Frame{ID: id, IsExtended: ext, Length: l, IsRemote: dlc&dlcRTR != 0}
	if !f.IsRemote {
		copy(f.Data[:l], c.r[a+bufD0:])
	}
	return f
}

// kickTx starts whatever can start now: on the bus in Normal mode, internally in
// Loopback mode.
func (c *Chip) kickTx(at int64) {
	switch c.opmod() {
	case modeNormal:
		if c.onBus && !c.busOff && c.pick() >= 0 {
			c.bus.Kick(at)
		}
	case modeLoopback:
		if c.txBuf >= 0 || c.lbTimer.Armed() {
			return
		}
		n := c.pick()
		if n < 0 {
			return
		}
		start := at
		if start < c.lbIdle {
			start = c.lbIdle
		}
		if now := c.bus.Now(); start < now {
			start = now
		}
		f := c.txFrame(n)
		bits := canbus.FrameBits(f)
		c.txBuf, c.lbFrame = n, f
		c.lbIdle = start + c.chipBits(bits)
		c.bus.Schedule(c.lbTimer, start+c.chipBits(bits-3)) // end of EOF
	}
}

// loopbackDone: the looped-back frame completed; the chip receives it itself.
func (c *Chip) loopbackDone(at int64) {
	n := c.txBuf
	if n < 0 {
		return
	}
	c.txBuf = -1
	c.txDone(n, at)
	c.receive(c.lbFrame, at)
	c.modeDone(at)
	c.kickTx(at)
}

// txDone: buffer n's frame went out. Erratum 5: if TXREQ was set by RTS in mode 1,1 or
// by a WRITE and CS is still low, TXREQ stays set and the frame goes out again.
func (c *Chip) txDone(n int, at int64) {
	a := txBase(n)
	c.stats.Sent++
	if c.tec > 0 {
		c.tec--
		c.errState(at)
	}
	if c.spi.cs && c.errata&(1<<uint(n)) != 0 {
		c.stats.Repeats++
	} else {
		c.r[a] &^= txbTXREQ
	}
	c.abortReq[n] = false
	c.setFlags(intTX0<<uint(n), at)
}

// failed ends a failed attempt of buffer n: retried unless one-shot or aborted.
func (c *Chip) failed(n int, flag uint8) {
	a := txBase(n)
	c.r[a] |= flag
	switch {
	case c.abortReq[n]:
		c.r[a] = c.r[a]&^txbTXREQ | txbABTF
		c.stats.Aborted++
	case c.r[regCANCTRL]&canctrlOSM != 0:
		c.r[a] &^= txbTXREQ
	}
	c.abortReq[n] = false
}

// Pending implements canbus.Node. A frame starts: the chip also completes its bus
// integration here.
func (c *Chip) Pending(at int64) (can.Frame, bool) {
	c.cand = -1
	c.integrate(at)
	if !c.onBus || c.opmod() != modeNormal || c.busOff || !c.joined {
		return can.Frame{}, false
	}
	n := c.pick()
	if n < 0 {
		return can.Frame{}, false
	}
	c.cand = n
	return c.txFrame(n), true
}

func (c *Chip) TxStart(at int64) { c.txBuf = c.cand }

// TxLost implements canbus.Node: MLOA, and a retry at the next SOF unless one-shot.
func (c *Chip) TxLost(at int64) {
	if c.cand < 0 {
		return
	}
	c.stats.ArbLost++
	c.failed(c.cand, txbMLOA)
	c.modeDone(at)
}

func (c *Chip) TxDone(at int64) {
	n := c.txBuf
	if n < 0 {
		return // reset while on the wire
	}
	c.txBuf = -1
	c.txDone(n, at)
	c.modeDone(at)
	c.kickTx(at)
}

// TxError implements canbus.Node: TXERR, MERRF, TEC += 8 (not for an ACK error of an
// error-passive transmitter, ISO 11898-1 exception 1).
func (c *Chip) TxError(e canbus.ErrorKind, at int64) {
	n := c.txBuf
	if n < 0 {
		return
	}
	c.txBuf = -1
	c.stats.TxErrors++
	c.failed(n, txbTXERR)
	if !(e == canbus.AckError && c.tec >= 128) {
		c.tec += 8
	}
	c.errState(at)
	c.setFlags(intMERR, at)
	c.modeDone(at)
	c.kickTx(at)
}
