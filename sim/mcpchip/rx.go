package mcpchip

import (
	"go.einride.tech/can"

	"cand/mcp2515"
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
		fa := mcp2515.RegRXFSIDH(n)
		fr := c.r[fa : fa+4]
		if (fr[1]&mcp2515.SIDLEXIDE != 0) != f.IsExtended {
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

// sid and eid read SID[10:0] and EID[17:0] from SIDH, SIDL, EID8, EID0 (any of the
// four-register ID blocks).
func sid(b []byte) uint32 { return uint32(b[0])<<3 | uint32(b[1])>>5 }
func eid(b []byte) uint32 {
	return uint32(b[1]&mcp2515.SIDLEIDMask)<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// receive runs a valid frame through acceptance (datasheet figure 4-2): RXB0's
// filters first; a frame for a full RXB0 rolls over to RXB1 if BUKT; a frame for a
// full buffer is lost (RXnOVR, ERRIF). With RXM = 11 a buffer takes any frame;
// FILHIT then names the lowest matching filter of that buffer, else its first one.
// On rollover RXB0CTRL.FILHIT0 also reflects the filter (register 4-1 note 1).
func (c *Chip) receive(f can.Frame, at int64) {
	intf := c.r[mcp2515.RegCANINTF]
	rxm0 := c.r[mcp2515.RegRXB0CTRL] & mcp2515.RXBCTRLRXM
	rxm1 := c.r[mcp2515.RegRXB1CTRL] & mcp2515.RXBCTRLRXM
	h := c.match(0, 2, mcp2515.RegRXM0SIDH, rxm0, f)
	if h >= 0 || rxm0 == mcp2515.RXBCTRLRXMAny {
		if h < 0 {
			h = 0
		}
		switch {
		case intf&mcp2515.IntRX0 == 0:
			c.load(0, f, h, at)
		case c.r[mcp2515.RegRXB0CTRL]&mcp2515.RXB0CTRLBUKT == 0:
			c.overflow(mcp2515.EFLGRX0OVR, at)
		case intf&mcp2515.IntRX1 == 0:
			c.load(1, f, h, at) // rollover: FILHIT 0/1 in RXB1
			c.r[mcp2515.RegRXB0CTRL] = c.r[mcp2515.RegRXB0CTRL]&^mcp2515.RXB0CTRLFILHIT0 | uint8(h)
		default:
			c.overflow(mcp2515.EFLGRX1OVR, at)
		}
		return
	}
	h = c.match(2, 6, mcp2515.RegRXM1SIDH, rxm1, f)
	if h >= 0 || rxm1 == mcp2515.RXBCTRLRXMAny {
		if h < 0 {
			h = 2
		}
		if intf&mcp2515.IntRX1 == 0 {
			c.load(1, f, h, at)
		} else {
			c.overflow(mcp2515.EFLGRX1OVR, at)
		}
	}
}

// load writes f into RXBn: SIDH, SIDL (SRR for a standard remote frame, IDE),
// EID8, EID0 (0 for standard frames), DLC (RTR for an extended remote frame), the DLC
// data bytes (later ones keep their old contents); CTRL gets RXRTR and FILHIT; RXnIF.
func (c *Chip) load(n int, f can.Frame, hit int, at int64) {
	base := mcp2515.RegRXB0CTRL + 0x10*uint8(n)
	b := c.r[base+mcp2515.BufSIDH : base+mcp2515.BufLen]
	mcp2515.PutID(b[0:4], f.ID, f.IsExtended)
	dlc := f.Length & mcp2515.DLCMask
	if f.IsRemote {
		if f.IsExtended {
			dlc |= mcp2515.DLCRTR
		} else {
			b[1] |= mcp2515.SIDLSRR
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
		ctrl = ctrl&^(mcp2515.RXBCTRLRXRTR|mcp2515.RXB0CTRLFILHIT0) | uint8(hit)&mcp2515.RXB0CTRLFILHIT0
	} else {
		ctrl = ctrl&^(mcp2515.RXBCTRLRXRTR|mcp2515.RXB1CTRLFILHIT) | uint8(hit)
	}
	if f.IsRemote {
		ctrl |= mcp2515.RXBCTRLRXRTR
	}
	c.r[base] = ctrl
	c.stats.Received++
	c.setFlags(mcp2515.IntRX0<<uint(n), at)
}

// overflow: an accepted frame found its buffer full and is lost.
func (c *Chip) overflow(flag uint8, at int64) {
	c.stats.Lost++
	c.r[mcp2515.RegEFLG] |= flag
	c.setFlags(mcp2515.IntERR, at)
}

// listening reports whether the chip takes part in bus traffic as a receiver.
func (c *Chip) listening(at int64) bool {
	m := c.opmod()
	return (m == mcp2515.ModeNormal || m == mcp2515.ModeListenOnly) && !c.busOff && at >= c.readyAt
}

// Receive implements canbus.Node.
func (c *Chip) Receive(f can.Frame, at int64) {
	if c.opmod() == mcp2515.ModeSleep {
		c.busActivity(at)
		return
	}
	if !c.listening(at) {
		return
	}
	if c.Garbled(at) {
		c.RxError(canbus.FormError, at)
		return
	}
	if c.opmod() == mcp2515.ModeNormal {
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
	if c.opmod() == mcp2515.ModeSleep {
		c.busActivity(at)
		return
	}
	if !c.listening(at) {
		return
	}
	c.stats.RxErrors++
	if c.opmod() == mcp2515.ModeNormal {
		if e == canbus.DominantBits {
			c.rec += 8
		} else {
			c.rec++
		}
		c.errState(at)
	}
	c.setFlags(mcp2515.IntMERR, at)
}

// Acks implements canbus.Node.
func (c *Chip) Acks(at int64) bool {
	return c.opmod() == mcp2515.ModeNormal && !c.busOff && at >= c.readyAt && !c.Garbled(at)
}

// busActivity in Sleep mode: with WAKIE set, WAKIF sets and the chip wakes into
// Listen-only mode (datasheet §10.2). The frame that woke it is not received.
func (c *Chip) busActivity(at int64) {
	if c.r[mcp2515.RegCANINTE]&mcp2515.IntWAK != 0 {
		c.setFlags(mcp2515.IntWAK, at)
		c.wake(at)
	}
}
