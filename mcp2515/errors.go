package mcp2515

import "cand/canstate"

// ErrorEvent is what one error pass found. The bridge turns it into a SocketCAN
// error frame (linux/can/error.h) and metrics.
type ErrorEvent struct {
	State, Prev canstate.State
	EFLG        Bits
	TEC, REC    byte
	// Overflow: RXB0/RXB1 overflow flags seen (frames the chip dropped).
	RX0Overflow, RX1Overflow bool
	MessageError             bool // MERRF
	// Warning/passive direction, from EFLG.
	TXWarning, RXWarning, TXPassive, RXPassive bool
	// ChipReset: CNF or CANINTE no longer hold what Init wrote; the chip reset
	// itself (brown-out, glitch). The owner must re-initialise it.
	ChipReset bool
}

// StateFromEFLG decodes the bus state, highest first as the kernel's mcp251x does.
func StateFromEFLG(eflg Bits) canstate.State {
	switch {
	case eflg&EFLGTXBO != 0:
		return canstate.BusOff
	case eflg&(EFLGTXEP|EFLGRXEP) != 0:
		return canstate.ErrorPassive
	case eflg&(EFLGTXWAR|EFLGRXWAR) != 0:
		return canstate.ErrorWarning
	}
	return canstate.ErrorActive
}

// The counters' thresholds for EFLG's warning and error-passive flags (MCP2515
// datasheet DS20001801J §6.6 and the EFLG register).
const (
	warningLimit = 96
	passiveLimit = 128
	eflgCounted  = EFLGTXWAR | EFLGRXWAR | EFLGTXEP | EFLGRXEP
)

// settleReads bounds the error pass's further READs: the counters, EFLG, the
// counters again.
const settleReads = 3

// settle makes the counters and EFLG agree. They are shifted out of the chip one
// after the other, the counters first: a transfer paused between them (the owner
// thread interrupted while it fills the SPI FIFO, CS held) lets failed frames
// move the counters and flags on meanwhile. While EFLG's warning and passive
// flags disagree with the counters, it reads the counters again, then EFLG, then
// the counters, each after the last: the event's state and counters agree, or
// else its counters are never older than its state (the kernel's
// drivers/net/can/spi/mcp251x.c, too, reads the counters after the flags).
// Counters that agree cost no READ. It returns EFLG as last read.
func (c *Controller) settle(ev *ErrorEvent, eflg Bits) (Bits, error) {
	for i := 0; i < settleReads && eflg&EFLGTXBO == 0 && eflg&eflgCounted != countedFlags(ev.TEC, ev.REC); i++ {
		if i%2 == 1 {
			r, err := c.readRegs(RegEFLG, 1)
			if err != nil {
				return eflg, err
			}
			eflg = Bits(r[0]) // overflow flags only the MCU clears: those seen before are still set
			continue
		}
		r, err := c.readRegs(RegTEC, 2)
		if err != nil {
			return eflg, err
		}
		ev.TEC, ev.REC = r[0], r[1]
	}
	return eflg, nil
}

// countedFlags is what EFLG's warning and error-passive flags read with these
// counters.
func countedFlags(tec, rec byte) Bits {
	var f Bits
	if tec >= warningLimit {
		f |= EFLGTXWAR
	}
	if rec >= warningLimit {
		f |= EFLGRXWAR
	}
	if tec >= passiveLimit {
		f |= EFLGTXEP
	}
	if rec >= passiveLimit {
		f |= EFLGRXEP
	}
	return f
}

// errorPass reads TEC..EFLG (0x1C..0x2D) in one READ: the counters, the masks in
// between, CNF3..CNF1, CANINTE, CANINTF and EFLG. That also checks the chip's
// health: CNF and CANINTE must still hold what Init wrote. If EFLG's warning and
// passive flags disagree with the counters read before it, settle reads them
// again. Then it clears the flags it handled and reports an ErrorEvent.
func (c *Controller) errorPass(sink Sink) error {
	c.stats.ErrorPasses++
	const first, n = RegTEC, ErrorRegsLen
	c.tx[0], c.tx[1] = InstrRead, byte(first)
	clear(c.tx[2 : 2+n])
	if err := c.spi.Transfer(OpRead, c.tx[:2+n], c.rx[:2+n]); err != nil {
		return err
	}
	var r [n]byte
	copy(r[:], c.rx[2:2+n]) // c.rx is reused by the BIT MODIFYs below
	reg := func(a Addr) byte { return r[a.From(first)] }
	ev := &c.errEv
	*ev = ErrorEvent{Prev: c.state}
	ev.TEC, ev.REC = reg(RegTEC), reg(RegREC)
	intf, eflg := Bits(reg(RegCANINTF)), Bits(reg(RegEFLG))
	ev.EFLG = eflg
	if reg(RegCNF1) != c.cfg.CNF1 || reg(RegCNF2) != c.cfg.CNF2 || reg(RegCNF3) != c.cfg.CNF3 || reg(RegCANINTE) == 0 {
		ev.ChipReset = true
		ev.State = c.state
		sink.Error(ev)
		return nil
	}
	eflg, err := c.settle(ev, eflg)
	if err != nil {
		return err
	}
	ev.EFLG = eflg
	ev.State = StateFromEFLG(eflg)
	ev.TXWarning = eflg&EFLGTXWAR != 0
	ev.RXWarning = eflg&EFLGRXWAR != 0
	ev.TXPassive = eflg&EFLGTXEP != 0
	ev.RXPassive = eflg&EFLGRXEP != 0
	ev.RX0Overflow = eflg&EFLGRX0OVR != 0
	ev.RX1Overflow = eflg&EFLGRX1OVR != 0
	ev.MessageError = intf&IntMERR != 0
	// Overflow flags are cleared by the MCU; the other EFLG bits follow the counters.
	if eflg&EFLGOVRMask != 0 {
		if err := c.bitModify(RegEFLG, EFLGOVRMask, 0); err != nil {
			return err
		}
	}
	if clr := intf & (IntERR | IntMERR | IntWAK); clr != 0 {
		if err := c.bitModify(RegCANINTF, clr, 0); err != nil {
			return err
		}
	}
	c.state = ev.State
	if ev.State != ev.Prev || ev.RX0Overflow || ev.RX1Overflow || ev.MessageError {
		sink.Error(ev)
	}
	return nil
}

// errorCheck reads CANINTF and EFLG (one 4-byte READ) and runs the error pass if an
// error or message-error flag is set.
func (c *Controller) errorCheck(sink Sink) error {
	c.tx[0], c.tx[1], c.tx[2], c.tx[3] = InstrRead, byte(RegCANINTF), 0, 0
	if err := c.spi.Transfer(OpRead, c.tx[:4], c.rx[:4]); err != nil {
		return err
	}
	if Bits(c.rx[2])&(IntERR|IntMERR) == 0 && Bits(c.rx[3])&EFLGOVRMask == 0 {
		return nil
	}
	return c.errorPass(sink)
}

// Counters reads TEC and REC.
func (c *Controller) Counters() (tec, rec byte, err error) {
	r, err := c.readRegs(RegTEC, 2)
	if err != nil {
		return 0, 0, err
	}
	return r[0], r[1], nil
}
