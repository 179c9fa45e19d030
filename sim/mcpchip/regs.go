package mcpchip

// canon maps an address to its register: CANSTAT and CANCTRL appear at every xEh and
// xFh address (datasheet table 11-1).
func canon(a uint8) uint8 {
	a &= 0x7F
	switch a & 0x0F {
	case 0x0E:
		return regCANSTAT
	case 0x0F:
		return regCANCTRL
	}
	return a
}

func txBase(n int) uint8 { return regTXB0CTRL + 0x10*uint8(n) }

func (c *Chip) opmod() uint8 { return c.r[regCANSTAT] & canstatOPMOD }

// readReg is a register as the SPI READ sees it.
func (c *Chip) readReg(a uint8) byte {
	a = canon(a)
	switch a {
	case regCANSTAT:
		return c.opmod() | c.icod()
	case regTXRTSCTRL:
		// BnRTS read the pin in digital-input mode, 0 in request-to-send mode
		// (register 3-2); the pins are left unconnected: pulled up, high.
		m := c.r[a] & txrtsBnRTSM
		return m | txrtsPinsHigh&^(m<<3)
	}
	return c.r[a]
}

// Writable bits of registers with read-only or unimplemented bits (register 3-1 .. 7-2).
const (
	wrFilterSIDL = 0xEB // RXFnSIDL: SID[2:0], EXIDE, EID[17:16]
	wrMaskSIDL   = 0xE3 // RXMnSIDL: SID[2:0], EID[17:16]
	wrCNF3       = 0xC7 // SOF, WAKFIL, PHSEG2[2:0]
	wrBFPCTRL    = 0x3F
	wrTXRTSCTRL  = txrtsBnRTSM // BnRTS (5:3) are the pins, read-only (readReg)
	wrTXBCTRL    = txbTXREQ | txbTXP
	wrTXBSIDL    = 0xEB // SID[2:0], EXIDE, EID[17:16]
	wrTXBDLC     = dlcRTR | dlcDLC
	wrRXB0CTRL   = rxbRXM | rxb0BUKT
	wrRXB1CTRL   = rxbRXM
)

// set writes v into the bits of register a selected by w.
func (c *Chip) set(a, w, v uint8) { c.r[a] = c.r[a]&^w | v&w }

// writeReg is an SPI write (WRITE, LOAD TX BUFFER, BIT MODIFY's result) of v to a.
// byWrite marks the WRITE instruction, for erratum 5.
func (c *Chip) writeReg(a, v uint8, byWrite bool, at int64) {
	a = canon(a)
	cfg := c.opmod() == modeConfig
	switch {
	case a < regBFPCTRL || (a >= regRXF3SIDH && a < regTEC) || (a >= regRXM0SIDH && a < regCNF3):
		// Filters and masks: writable only in Configuration mode (§10.1).
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
	case a == regCNF1 || a == regCNF2:
		if cfg {
			c.r[a] = v
		}
	case a == regCNF3:
		if cfg {
			c.set(a, wrCNF3, v)
		}
	case a == regBFPCTRL:
		c.set(a, wrBFPCTRL, v)
	case a == regTXRTSCTRL:
		if cfg { // datasheet §10.1: modifiable only in Configuration mode
			c.set(a, wrTXRTSCTRL, v)
		}
	case a == regCANSTAT, a == regTEC, a == regREC:
		// read-only
	case a == regCANCTRL:
		old := c.r[a]
		c.r[a] = v
		if v&canctrlABAT != 0 {
			c.abortAll(at)
		}
		if (old^v)&canctrlREQOP != 0 || c.opmod() != v&canctrlREQOP {
			c.requestMode(at)
		}
	case a == regCANINTE:
		c.r[a] = v
		c.updateINT(at)
	case a == regCANINTF:
		old := c.r[a]
		if c.r[regEFLG]&eflgOVR != 0 {
			v |= old & intERR // overflow condition persists
		}
		c.r[a] = v
		if v&^old&intWAK != 0 && c.opmod() == modeSleep {
			c.wake(at) // the MCU forcing WAKIF wakes the chip
		}
		c.updateINT(at)
	case a == regEFLG:
		c.set(a, eflgOVR, v)
	case a >= regTXB0CTRL && a < regRXB0CTRL:
		n := int(a-regTXB0CTRL) >> 4
		switch a & 0x0F {
		case bufCTRL:
			c.writeTXBCTRL(n, v, byWrite, at)
		case bufSIDL:
			c.set(a, wrTXBSIDL, v)
		case bufDLC:
			c.set(a, wrTXBDLC, v)
		default:
			c.r[a] = v
		}
	case a == regRXB0CTRL:
		c.set(a, wrRXB0CTRL, v)
		c.r[a] = c.r[a]&^rxb0BUKT1 | c.r[a]&rxb0BUKT>>1 // BUKT1 = BUKT
	case a == regRXB1CTRL:
		c.set(a, wrRXB1CTRL, v)
	}
	// RX buffer contents (0x61..0x6D, 0x71..0x7D) are read-only.
}

// writeTXBCTRL: TXP is plain; TXREQ 0→1 requests transmission, 1→0 aborts.
func (c *Chip) writeTXBCTRL(n int, v uint8, byWrite bool, at int64) {
	a := txBase(n)
	c.set(a, txbTXP, v)
	req := v&txbTXREQ != 0
	was := c.r[a]&txbTXREQ != 0
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
