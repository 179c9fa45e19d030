package mcpchip

import (
	"go.einride.tech/can"

	"cand/sim/canbus"
)

// Receive side (datasheet §4): acceptance filters and masks, RXB0 → RXB1 rollover,
// overflow.

// RXM modes 01 and 10: DS20001801J calls them reserved; earlier revisions (DS21801G)
// define them as standard-only (EID8/EID0 not applied to data) and extended-only, which
// the model follows.
const (
	rxmStd = 0x20
	rxmExt = 0x40
)

// match returns the lowest filter in [from, to) that accepts f under the mask at
// maskAddr, or -1. A filter accepts only frames of its EXIDE type. For standard
// frames the filter's EID8/EID0 bytes, under the mask's, apply to data bytes 0 and 1
// (datasheet §4.5; bytes beyond the DLC, and remote frames, count as 0).
func (c *Chip) match(from, to int, maskAddr, rxm uint8, f can.Frame) int {
	switch {
	case rxm == rxmStd && f.IsExtended, rxm == rxmExt && !f.IsExtended:
		return -1
	}
	m := c.r[maskAddr : maskAddr+4]
	for n := from; n < to; n++ {
		fa := rxfSIDH(n)
		fr := c.r[fa : fa+4]
		if (fr[1]&sidlIDE != 0) != f.IsExtended {
			continue
		}
		if f.IsExtended {
			fid := sid(fr)<<18 | eid(fr)
			mid := sid(m)<<18 | eid(m)
			if (f.ID^fid)&mid == 0 {
				return n
			}
			continue
		}
		if (f.ID^sid(fr))&sid(m) != 0 {
			continue
		}
		var d0, d1 byte
		if !f.IsRemote && f.Length > 0 {
			d0 = f.Data[0]
		}
		if !f.IsRemote && f.Length > 1 {
			d1 = f.Data[1]
		}
		if rxm == rxmStd || (d0^fr[2])&m[2] == 0 && (d1^fr[3])&m[3] == 0 {
			return n
		}
	}
	return -1
}

// receive runs a valid frame through acceptance (datasheet figure 4-2): RXB0's
// filters first; a frame for a full RXB0 rolls over to RXB1 if BUKT; a frame for a
// full buffer is lost (RXnOVR, ERRIF). With RXM = 11 a buffer takes any frame;
// FILHIT then names the lowest matching filter of that buffer, else its first one.
// On rollover RXB0CTRL.FILHIT0 also reflects the filter (register 4-1 note 1).
func (c *Chip) receive(f can.Frame, at int64) {
	intf := c.r[regCANINTF]
	rxm0 := c.r[regRXB0CTRL] & rxbRXM
	rxm1 := c.r[regRXB1CTRL] & rxbRXM
	h := c.match(0, 2, regRXM0SIDH, rxm0, f)
	if h >= 0 || rxm0 == rxbRXMAny {
		if h < 0 {
			h = 0
		}
		switch {
		case intf&intRX0 == 0:
			c.load(0, f, h, at)
		case c.r[regRXB0CTRL]&rxb0BUKT == 0:
			c.overflow(eflgRX0OVR, at)
		case intf&intRX1 == 0:
			c.load(1, f, h, at) // rollover: FILHIT 0/1 in RXB1
			c.r[regRXB0CTRL] = c.r[regRXB0CTRL]&^rxb0FILHIT0 | uint8(h)
		default:
			c.overflow(eflgRX1OVR, at)
		}
		return
	}
	h = c.match(2, 6, regRXM1SIDH, rxm1, f)
	if h >= 0 || rxm1 == rxbRXMAny {
		if h < 0 {
			h = 2
		}
		if intf&intRX1 == 0 {
			c.load(1, f, h, at)
		} else {
			c.overflow(eflgRX1OVR, at)
		}
	}
}

// load writes f into RXBn: SIDH, SIDL (SRR for a standard remote frame, IDE),
// EID8, EID0 (0 for standard frames), DLC (RTR for an extended remote frame), the DLC
// data bytes (later ones keep their old contents); CTRL gets RXRTR and FILHIT; RXnIF.
func (c *Chip) load(n int, f can.Frame, hit int, at int64) {
	base := regRXB0CTRL + 0x10*uint8(n)
	b := c.r[base+bufSIDH : base+bufLen]
	putID(b[0:4], f.ID, f.IsExtended)
	dlc := f.Length & dlcDLC
	if f.IsRemote {
		if f.IsExtended {
			dlc |= dlcRTR
		} else {
			b[1] |= sidlSRR
		}
	} else {
		l := f.Length
		if l > 8 {
			l = 8
		}
		copy(b[5:5+l], f.Data[:l])
	}
	b[4] = dlc
	ctrl := c.r[base]
	if n == 0 {
		ctrl = ctrl&^(rxbRXRTR|rxb0FILHIT0) | uint8(hit)&rxb0FILHIT0
	} else {
		ctrl = ctrl&^(rxbRXRTR|rxb1FILHIT) | uint8(hit)
	}
	if f.IsRemote {
		ctrl |= rxbRXRTR
	}
	c.r[base] = ctrl
	c.stats.Received++
	c.setFlags(intRX0<<uint(n), at)
}

// overflow: an accepted frame found its buffer full and is lost.
func (c *Chip) overflow(flag uint8, at int64) {
	c.stats.Lost++
	c.r[regEFLG] |= flag
	c.setFlags(intERR, at)
}

// listening reports whether the chip takes part in the frame on the bus as a receiver.
func (c *Chip) listening() bool {
	return onBus(c.opmod()) && !c.busOff && c.joined
}

func (c *Chip) Receive(f can.Frame, at int64) {
	if c.opmod() == modeSleep {
		c.busActivity(at)
		return
	}
	if !c.listening() {
		return
	}
	if c.Garbled(at) {
		c.RxError(canbus.FormError, at)
		return
	}
	if c.opmod() == modeNormal {
		switch {
		case c.rec > 127:
			c.rec = 127
		case c.rec > 0:
			c.rec--
		}
		c.errState(at)
	}
	c.receive(f, at)
}

// RxError implements canbus.Node: REC += 1 (8 for DominantBits), MERRF. Listen-only
// mode sets MERRF only.
func (c *Chip) RxError(e canbus.ErrorKind, at int64) {
	if c.opmod() == modeSleep {
		c.busActivity(at)
		return
	}
	if !c.listening() {
		return
	}
	c.stats.RxErrors++
	if c.opmod() == modeNormal {
		if e == canbus.DominantBits {
			c.rec += 8
		} else {
			c.rec++
		}
		c.errState(at)
	}
	c.setFlags(intMERR, at)
}

func (c *Chip) Acks(at int64) bool {
	return c.opmod() == modeNormal && !c.busOff && c.joined && !c.Garbled(at)
}

// busActivity in Sleep mode: with WAKIE set, WAKIF sets and the chip wakes into
// Listen-only mode (datasheet §10.2). The frame that woke it is not received.
func (c *Chip) busActivity(at int64) {
	if c.r[regCANINTE]&intWAK != 0 {
		c.setFlags(intWAK, at)
		c.wake(at)
	}
}
