package mcpchip

// SPI instruction decoder states (datasheet §12).
type spiPhase uint8

const (
	phInstr     spiPhase = iota // next byte is an instruction
	phReadAddr                  // READ: address byte
	phRead                      // READ / READ RX BUFFER: data out, auto-increment
	phWriteAddr                 // WRITE: address byte
	phWrite                     // WRITE: data in, auto-increment
	phLoadTx                    // LOAD TX BUFFER: data in, auto-increment
	phBMAddr                    // BIT MODIFY: address
	phBMMask                    // BIT MODIFY: mask
	phBMData                    // BIT MODIFY: data
	phStatus                    // READ STATUS: status byte, repeated
	phRxStatus                  // RX STATUS: status byte, repeated
	phIgnore                    // instruction complete (or unknown): ignore until CS rises
)

type spiState struct {
	cs      bool
	ph      spiPhase
	addr    uint8
	mask    uint8
	rxRead  int8 // READ RX BUFFER: buffer whose RXnIF clears when CS rises, -1 none
	prevBit byte // last MOSI bit, for the one-bit-late corruption model
}

const undriven = 0xFF // MISO when the chip does not drive SO

// SetCS is the chip-select input (soc.SPISlave): active = CS low.
func (c *Chip) SetCS(active bool, at int64) {
	c.bus.Lock()
	defer c.bus.Unlock()
	c.bus.AdvanceTo(at)
	s := &c.spi
	if active == s.cs {
		return
	}
	s.cs = active
	if active {
		s.ph, s.rxRead, s.prevBit = phInstr, -1, 0
		c.errata = 0
		if c.onBus {
			c.bus.Hold()
		}
		return
	}
	// CS rises: READ RX BUFFER clears the buffer's RXnIF (datasheet §12.4).
	if s.rxRead >= 0 && at >= c.readyAt {
		c.r[regCANINTF] &^= intRX0 << uint(s.rxRead)
		c.updateINT(at)
	}
	s.rxRead = -1
	c.errata = 0
	if c.onBus {
		c.bus.Release()
	}
	if c.unplugAtCSRise {
		c.absent, c.unplugAtCSRise = true, false
	}
}

// Exchange shifts one byte (soc.SPISlave). Only SPI modes 0,0 and 1,1 at SCLK ≤ 10 MHz
// work; otherwise both directions are shifted by one bit (see the package comment).
func (c *Chip) Exchange(mosi byte, mode uint8, sclkHz uint32, at int64) byte {
	c.bus.Lock()
	defer c.bus.Unlock()
	c.bus.AdvanceTo(at)
	s := &c.spi
	if !s.cs || c.absent {
		return undriven
	}
	if at < c.readyAt {
		c.stats.Ignored++
		return undriven
	}
	bad := (mode != 0 && mode != 3) || sclkHz > maxSCLKHz
	in := mosi
	if bad {
		in = mosi>>1 | s.prevBit<<7
		c.stats.Corrupted++
	}
	s.prevBit = mosi & 1
	out := c.step(in, mode, at)
	if bad {
		out = out>>1 | 0x80
	}
	return out
}

// step runs the instruction decoder on one (possibly corrupted) MOSI byte.
func (c *Chip) step(b byte, mode uint8, at int64) byte {
	s := &c.spi
	switch s.ph {
	case phInstr:
		c.decode(b, mode, at)
	case phReadAddr:
		s.addr, s.ph = b&0x7F, phRead
	case phRead:
		v := c.readReg(s.addr)
		s.addr = (s.addr + 1) & 0x7F
		return v
	case phWriteAddr:
		s.addr, s.ph = b&0x7F, phWrite
	case phWrite, phLoadTx:
		c.writeReg(s.addr, b, s.ph == phWrite, at)
		s.addr = (s.addr + 1) & 0x7F
	case phBMAddr:
		s.addr, s.ph = b&0x7F, phBMMask
	case phBMMask:
		s.mask, s.ph = b, phBMData
	case phBMData:
		mask := s.mask
		if !bitModifiable(s.addr) {
			mask = 0xFF
		}
		a := canon(s.addr)
		c.writeReg(s.addr, c.r[a]&^mask|b&mask, false, at)
		s.ph = phIgnore
	case phStatus:
		return c.readStatus()
	case phRxStatus:
		return c.rxStatus()
	}
	return undriven
}

// decode handles an instruction byte.
func (c *Chip) decode(b byte, mode uint8, at int64) {
	s := &c.spi
	s.ph = phIgnore
	switch {
	case b == instrRESET:
		c.powerOn(at)
	case b == instrREAD:
		s.ph = phReadAddr
	case b == instrWRITE:
		s.ph = phWriteAddr
	case b == instrBITMODIFY:
		s.ph = phBMAddr
	case b == instrREADSTATUS:
		s.ph = phStatus
	case b == instrRXSTATUS:
		s.ph = phRxStatus
	case b&0xF9 == instrREADRXBUF: // 1001 0nm0
		n := b >> 2 & 1
		s.rxRead = int8(n)
		s.addr = regRXB0CTRL + 0x10*n + bufSIDH
		if b&0x02 != 0 {
			s.addr += bufD0 - bufSIDH
		}
		s.ph = phRead
	case b&0xF8 == instrLOADTXBUF && b&0x07 <= 5: // 0100 0abc, abc 0..5
		n := (b & 0x07) >> 1
		s.addr = regTXB0CTRL + 0x10*n + bufSIDH
		if b&0x01 != 0 {
			s.addr += bufD0 - bufSIDH
		}
		s.ph = phLoadTx
	case b&0xF8 == instrRTS:
		for n := 0; n < 3; n++ {
			if b&(1<<uint(n)) != 0 {
				c.requestTx(n, at)
				if mode == 3 { // erratum 5: RTS in mode 1,1 with CS held low repeats
					c.errata |= 1 << uint(n)
				}
			}
		}
	}
}

// readStatus is the READ STATUS byte (figure 12-8).
func (c *Chip) readStatus() byte {
	f := c.r[regCANINTF]
	s := f & (intRX0 | intRX1)
	for n := 0; n < 3; n++ {
		if c.r[txBase(n)]&txbTXREQ != 0 {
			s |= statTXB0REQ << uint(2*n)
		}
		if f&(intTX0<<uint(n)) != 0 {
			s |= statTX0IF << uint(2*n)
		}
	}
	return s
}

// rxStatus is the RX STATUS byte (figure 12-9). Type and filter describe RXB0 when it
// is full, else RXB1.
func (c *Chip) rxStatus() byte {
	f := c.r[regCANINTF]
	var s byte
	if f&intRX0 != 0 {
		s |= rxstatMsgRXB0
	}
	if f&intRX1 != 0 {
		s |= rxstatMsgRXB1
	}
	var base uint8
	switch {
	case f&intRX0 != 0:
		base = regRXB0CTRL
		s |= c.r[base] & rxb0FILHIT0
	case f&intRX1 != 0:
		base = regRXB1CTRL
		hit := c.r[base] & rxb1FILHIT
		if hit < 2 {
			hit += 6 // RXF0/RXF1 rolled over into RXB1
		}
		s |= hit
	default:
		return s
	}
	if c.r[base]&rxbRXRTR != 0 {
		s |= rxstatRemote
	}
	if c.r[base+bufSIDL]&sidlIDE != 0 {
		s |= rxstatExt
	}
	return s
}
