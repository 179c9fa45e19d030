package mcpchip

import "cand/mcp2515"

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
		c.r[mcp2515.RegCANINTF] &^= mcp2515.IntRX0 << uint(s.rxRead)
		c.updateINT(at)
	}
	s.rxRead = -1
	c.errata = 0
	if c.onBus {
		c.bus.Release()
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
	bad := (mode != 0 && mode != 3) || sclkHz > mcp2515.InstrMaxSCLK
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
		if !mcp2515.IsBitModifiable(s.addr) {
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
	case b == mcp2515.InstrReset:
		c.powerOn(at)
	case b == mcp2515.InstrRead:
		s.ph = phReadAddr
	case b == mcp2515.InstrWrite:
		s.ph = phWriteAddr
	case b == mcp2515.InstrBitModify:
		s.ph = phBMAddr
	case b == mcp2515.InstrReadStatus:
		s.ph = phStatus
	case b == mcp2515.InstrRxStatus:
		s.ph = phRxStatus
	case b&0xF9 == mcp2515.InstrReadRxBuf: // 1001 0nm0
		n := b >> 2 & 1
		s.rxRead = int8(n)
		s.addr = mcp2515.RegRXB0CTRL + 0x10*n + mcp2515.BufSIDH
		if b&0x02 != 0 {
			s.addr += mcp2515.BufD0 - mcp2515.BufSIDH
		}
		s.ph = phRead
	case b&0xF8 == mcp2515.InstrLoadTxBuf && b&0x07 <= 5: // 0100 0abc, abc 0..5
		n := (b & 0x07) >> 1
		s.addr = mcp2515.RegTXB0CTRL + 0x10*n + mcp2515.BufSIDH
		if b&0x01 != 0 {
			s.addr += mcp2515.BufD0 - mcp2515.BufSIDH
		}
		s.ph = phLoadTx
	case b&0xF8 == mcp2515.InstrRTS:
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
	f := c.r[mcp2515.RegCANINTF]
	s := f & (mcp2515.IntRX0 | mcp2515.IntRX1)
	for n := 0; n < 3; n++ {
		if c.r[txBase(n)]&mcp2515.TXBCTRLTXREQ != 0 {
			s |= mcp2515.StatusTXB0REQ << uint(2*n)
		}
		if f&(mcp2515.IntTX0<<uint(n)) != 0 {
			s |= mcp2515.StatusTX0IF << uint(2*n)
		}
	}
	return s
}

// rxStatus is the RX STATUS byte (figure 12-9). Type and filter describe RXB0 when it
// is full, else RXB1.
func (c *Chip) rxStatus() byte {
	f := c.r[mcp2515.RegCANINTF]
	var s byte
	if f&mcp2515.IntRX0 != 0 {
		s |= mcp2515.RxStatusMsgRXB0
	}
	if f&mcp2515.IntRX1 != 0 {
		s |= mcp2515.RxStatusMsgRXB1
	}
	var base uint8
	switch {
	case f&mcp2515.IntRX0 != 0:
		base = mcp2515.RegRXB0CTRL
		s |= c.r[base] & mcp2515.RXB0CTRLFILHIT0
	case f&mcp2515.IntRX1 != 0:
		base = mcp2515.RegRXB1CTRL
		hit := c.r[base] & mcp2515.RXB1CTRLFILHIT
		if hit < 2 {
			hit += 6 // RXF0/RXF1 rolled over into RXB1
		}
		s |= hit
	default:
		return s
	}
	if c.r[base]&mcp2515.RXBCTRLRXRTR != 0 {
		s |= mcp2515.RxStatusTypeRemote
	}
	if c.r[base+mcp2515.BufSIDL]&mcp2515.SIDLEXIDE != 0 {
		s |= mcp2515.RxStatusTypeExt
	}
	return s
}
