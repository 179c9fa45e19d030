package mcp2515

import "errors"

// Hold takes a controller that went bus-off off the bus and then hands over what
// it still holds, so that the next RESET wipes nothing unseen. A controller
// recovers from bus-off by itself after 128 occurrences of 11 recessive bits
// (MCP2515 datasheet DS20001801J §6.6); if that happened before Hold, it has sent
// pending frames and received since. Hold requests Configuration mode with ABAT
// set, interrupts still enabled: the chip aborts what is pending (a frame on the
// wire finishes its attempt), changes mode, and from then on neither sends nor
// receives, its flags kept. Then status passes report the frames received
// (Received), the buffers sent (Transmitted) or aborted (TxFailed), and an RX
// overflow as an ErrorEvent with the bus state unchanged (the Configuration mode
// cleared TEC and REC, §10.1: the event carries the counters of the last error
// pass). Last, interrupts are disabled and ABAT cleared, as Stop leaves the chip.
func (c *Controller) Hold(sink Sink) error {
	if err := c.requestMode(ModeConfig, CANCTRLABAT); err != nil {
		return err
	}
	c.aborting = c.nPending > 0
	for pass := 0; pass < maxPasses; pass++ {
		work, err := c.statusPass(sink, pass, errNever)
		if errors.Is(err, errReinit) {
			return nil // the chip reset itself (reported): nothing left to read
		}
		if err != nil {
			return err
		}
		if !work {
			break
		}
	}
	if err := c.heldOverflow(sink); err != nil {
		return err
	}
	if err := c.writeReg(RegCANINTE, 0); err != nil {
		return err
	}
	c.aborting = false
	return c.writeReg(RegCANCTRL, c.canctrl(ModeConfig))
}

// heldOverflow reads EFLG and reports and clears its overflow flags, the bus state
// and counters as the last error pass found them.
func (c *Controller) heldOverflow(sink Sink) error {
	eflg, err := c.readReg(RegEFLG)
	if err != nil {
		return err
	}
	if eflg&EFLGOVRMask == 0 {
		return nil
	}
	if err := c.bitModify(RegEFLG, EFLGOVRMask, 0); err != nil {
		return err
	}
	ev := &c.errEv
	ev.State, ev.Prev = c.state, c.state
	ev.RX0Overflow = eflg&EFLGRX0OVR != 0
	ev.RX1Overflow = eflg&EFLGRX1OVR != 0
	ev.MessageError, ev.ChipReset = false, false
	sink.Error(ev)
	return nil
}
