package mcpchip

import "cand/mcp2515"

// canon maps an address to its register: CANSTAT and CANCTRL appear at every xEh and
// xFh address (datasheet table 11-1).
func canon(a uint8) uint8 {
	a &= 0x7F
	switch a & 0x0F {
	case 0x0E:
		return mcp2515.RegCANSTAT
	case 0x0F:
		return mcp2515.RegCANCTRL
	}
	return a
}

func txBase(n int) uint8 { return mcp2515.RegTXB0CTRL + 0x10*uint8(n) }

func (c *Chip) opmod() uint8 { return c.r[mcp2515.RegCANSTAT] & mcp2515.CANSTATOPMOD }

// readReg is a register as the SPI READ sees it.
func (c *Chip) readReg(a uint8) byte {
	a = canon(a)
	if a == mcp2515.RegCANSTAT {
		return c.opmod() | c.icod()
	}
	return c.r[a]
}

// Writable bits of registers with read-only or unimplemented bits (register 3-1 .. 7-2).
const (
	wrFilterSIDL = 0xEB // RXFnSIDL: SID[2:0], EXIDE, EID[17:16]
	wrMaskSIDL   = 0xE3 // RXMnSIDL: SID[2:0], EID[17:16]
	wrCNF3       = 0xC7 // SOF, WAKFIL, PHSEG2[2:0]
	wrBFPCTRL    = 0x3F
	wrTXRTSCTRL  = 0x07 // BnRTSM; BnRTS (5:3) are the pins, read-only
	wrTXBCTRL    = mcp2515.TXBCTRLTXREQ | mcp2515.TXBCTRLTXP
	wrTXBSIDL    = 0xEB // SID[2:0], EXIDE, EID[17:16]
	wrTXBDLC     = mcp2515.DLCRTR | mcp2515.DLCMask
	wrRXB0CTRL   = mcp2515.RXBCTRLRXM | mcp2515.RXB0CTRLBUKT
	wrRXB1CTRL   = mcp2515.RXBCTRLRXM
)

// set writes v into the bits of register a selected by w.
func (c *Chip) set(a, w, v uint8) { c.r[a] = c.r[a]&^w | v&w }

// writeReg is an SPI write (WRITE, LOAD TX BUFFER, BIT MODIFY's result) of v to a.
// byWrite marks the WRITE instruction, for erratum 5.
func (c *Chip) writeReg(a, v uint8, byWrite bool, at int64) {
	a = canon(a)
	cfg := c.opmod() == mcp2515.ModeConfig
	switch {
	case a < 0x0C || (a >= 0x10 && a < 0x1C) || (a >= 0x20 && a < 0x28):
		// Filters and masks: writable only in Configuration mode.
		if !cfg {
			return
		}
		switch {
		case a < 0x20 && a&0x03 == 1:
			c.set(a, wrFilterSIDL, v)
		case a >= 0x20 && a&0x03 == 1:
			c.set(a, wrMaskSIDL, v)
		default:
			c.r[a] = v
		}
	case a == mcp2515.RegCNF1 || a == mcp2515.RegCNF2:
		if cfg {
			c.r[a] = v
		}
	case a == mcp2515.RegCNF3:
		if cfg {
			c.set(a, wrCNF3, v)
		}
	case a == mcp2515.RegBFPCTRL:
		c.set(a, wrBFPCTRL, v)
	case a == mcp2515.RegTXRTSCTRL:
		c.set(a, wrTXRTSCTRL, v)
	case a == mcp2515.RegCANSTAT, a == mcp2515.RegTEC, a == mcp2515.RegREC:
		// read-only
	case a == mcp2515.RegCANCTRL:
		old := c.r[a]
		c.r[a] = v
		if v&mcp2515.CANCTRLABAT != 0 {
			c.abortAll(at)
		}
		if (old^v)&mcp2515.CANCTRLREQOP != 0 || c.opmod() != v&mcp2515.CANCTRLREQOP {
			c.requestMode(at)
		}
	case a == mcp2515.RegCANINTE:
		c.r[a] = v
		c.updateINT(at)
	case a == mcp2515.RegCANINTF:
		old := c.r[a]
		if c.r[mcp2515.RegEFLG]&mcp2515.EFLGOVRMask != 0 {
			v |= old & mcp2515.IntERR // overflow condition persists
		}
		c.r[a] = v
		if v&^old&mcp2515.IntWAK != 0 && c.opmod() == mcp2515.ModeSleep {
			c.wake(at) // the MCU forcing WAKIF wakes the chip
		}
		c.updateINT(at)
	case a == mcp2515.RegEFLG:
		c.set(a, mcp2515.EFLGOVRMask, v)
	case a >= mcp2515.RegTXB0CTRL && a < mcp2515.RegRXB0CTRL:
		n := int(a-mcp2515.RegTXB0CTRL) >> 4
		switch a & 0x0F {
		case mcp2515.BufCTRL:
			c.writeTXBCTRL(n, v, byWrite, at)
		case mcp2515.BufSIDL:
			c.set(a, wrTXBSIDL, v)
		case mcp2515.BufDLC:
			c.set(a, wrTXBDLC, v)
		default:
			c.r[a] = v
		}
	case a == mcp2515.RegRXB0CTRL:
		c.set(a, wrRXB0CTRL, v)
		c.r[a] = c.r[a]&^mcp2515.RXB0CTRLBUKT1 | c.r[a]&mcp2515.RXB0CTRLBUKT>>1 // BUKT1 = BUKT
	case a == mcp2515.RegRXB1CTRL:
		c.set(a, wrRXB1CTRL, v)
	}
	// RX buffer contents (0x61..0x6D, 0x71..0x7D) are read-only.
}

// writeTXBCTRL: TXP is plain; TXREQ 0→1 requests transmission, 1→0 aborts.
func (c *Chip) writeTXBCTRL(n int, v uint8, byWrite bool, at int64) {
	a := txBase(n)
	c.set(a, mcp2515.TXBCTRLTXP, v)
	req := v&mcp2515.TXBCTRLTXREQ != 0
	was := c.r[a]&mcp2515.TXBCTRLTXREQ != 0
	switch {
	case req && !was:
		c.requestTx(n, at)
		if byWrite { // erratum 5: a WRITE of TXREQ with CS held low repeats
			c.errata |= 1 << uint(n)
		}
	case !req && was:
		c.abortTx(n, at)
	}
}
