package kernelref

import (
	"fmt"
	"time"

	"cand/mcp2515"
)

// ostDelay is MCP251X_OST_DELAY_MS: the wait after power-up and after RESET.
const ostDelay = 5 * time.Millisecond

// open is mcp251x_open's chip part: mcp251x_hw_reset (RESET, wait, CANSTAT must
// read Configuration mode), mcp251x_setup (CNF1, CNF2, BIT MODIFY CNF3's PHSEG2;
// RXB0CTRL = BUKT | RXM1 | RXM0, RXB1CTRL = RXM1 | RXM0: filters off, rollover on)
// and mcp251x_set_normal_mode (CANINTE, then CANCTRL to the mode; in Normal mode
// CANSTAT polled until the chip is in it, every millisecond for up to a second).
// The waits pass on the board's clock (the kernel sleeps; here they are charged,
// before any figure is taken), so the chip's oscillator start-up is the board's.
func (p *port) open(cnf1, cnf2, cnf3 uint8, mode mcp2515.Mode) error {
	sleep := p.spend
	sleep(ostDelay)
	p.tx[0] = mcp2515.InstrReset
	if err := p.trans(1); err != nil {
		return err
	}
	sleep(ostDelay)
	st, err := p.readReg(mcp2515.RegCANSTAT)
	if err != nil {
		return err
	}
	if mcp2515.OPMOD(st) != mcp2515.ModeConfig {
		return fmt.Errorf("kernelref: CANSTAT %#02x after RESET: the chip is not in Configuration mode", st)
	}
	for _, w := range []regValue{{mcp2515.RegCNF1, mcp2515.Bits(cnf1)}, {mcp2515.RegCNF2, mcp2515.Bits(cnf2)}} {
		if err := p.writeReg(w.reg, w.v); err != nil {
			return err
		}
	}
	if err := p.writeBits(mcp2515.RegCNF3, mcp2515.CNF3PHSEG2, mcp2515.Bits(cnf3)&mcp2515.CNF3PHSEG2); err != nil {
		return err
	}
	if err := p.writeReg(mcp2515.RegRXB0CTRL, mcp2515.RXB0CTRLBUKT|mcp2515.RXBCTRLRXMAny); err != nil {
		return err
	}
	if err := p.writeReg(mcp2515.RegRXB1CTRL, mcp2515.RXBCTRLRXMAny); err != nil {
		return err
	}
	if err := p.writeReg(mcp2515.RegCANINTE, canintE); err != nil {
		return err
	}
	if err := p.writeReg(mcp2515.RegCANCTRL, mcp2515.REQOP(mode)); err != nil {
		return err
	}
	for tries := 0; mode == mcp2515.ModeNormal; tries++ {
		st, err := p.readReg(mcp2515.RegCANSTAT)
		if err != nil {
			return err
		}
		if mcp2515.OPMOD(st) == mcp2515.ModeNormal {
			break
		}
		if tries == 1000 {
			return fmt.Errorf("kernelref: the chip did not enter Normal mode (CANSTAT %#02x)", st)
		}
		sleep(time.Millisecond)
	}
	p.queueAwake = true // netif_wake_queue
	return nil
}

// stop is mcp251x_stop's chip part: interrupts off and cleared, TXB0 cleared,
// then Configuration mode (the kernel puts the chip to Sleep; Configuration mode
// is how cand leaves it).
func (p *port) stop() error {
	for _, w := range []regValue{{mcp2515.RegCANINTE, 0}, {mcp2515.RegCANINTF, 0}, {mcp2515.RegTXB0CTRL, 0}, {mcp2515.RegCANCTRL, mcp2515.REQOP(mcp2515.ModeConfig)}} {
		if err := p.writeReg(w.reg, w.v); err != nil {
			return err
		}
	}
	return nil
}

// regValue is a register and the value written to it.
type regValue struct {
	reg mcp2515.Addr
	v   mcp2515.Bits
}
