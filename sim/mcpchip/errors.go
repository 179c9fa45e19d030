package mcpchip

// Error confinement (datasheet §6): TEC/REC, EFLG, bus-off and its recovery.

// errState recomputes bus-off, TEC/REC and EFLG[5:0]; a change of EFLG sets ERRIF.
func (c *Chip) errState(at int64) {
	if c.tec > 255 && !c.busOff {
		c.busOff = true
		c.restartRecovery(at)
	}
	if c.rec > 255 {
		c.rec = 255
	}
	var e uint8
	if c.tec >= 96 {
		e |= eflgTXWAR | eflgEWARN
	}
	if c.rec >= 96 {
		e |= eflgRXWAR | eflgEWARN
	}
	if c.tec >= 128 {
		e |= eflgTXEP
	}
	if c.rec >= 128 {
		e |= eflgRXEP
	}
	if c.busOff {
		e |= eflgTXBO
	}
	tec := c.tec
	if tec > 255 {
		tec = 255
	}
	c.r[regTEC], c.r[regREC] = uint8(tec), uint8(c.rec)
	if old := c.r[regEFLG]; old&^eflgOVR != e {
		c.r[regEFLG] = old&eflgOVR | e
		c.setFlags(intERR, at)
	}
}

// restartRecovery starts counting the 128 × 11 recessive bits from now.
func (c *Chip) restartRecovery(at int64) {
	if !c.busOff || !c.onBus {
		return
	}
	c.busOffSeq = c.bus.RecessiveSequences(at)
	c.bus.Schedule(c.recovTimer, c.bus.NextRecessiveSequence(c.busOffSeq+128))
}

// checkRecovery: after 128 sequences of 11 recessive bits the chip is error-active
// again with TEC = REC = 0. Sleep mode suspends the count.
func (c *Chip) checkRecovery(at int64) {
	if !c.busOff {
		return
	}
	if c.opmod() == modeSleep {
		return // requestMode restarts the count
	}
	if c.bus.RecessiveSequences(at)-c.busOffSeq >= 128 {
		c.clearCounters(at)
		c.kickTx(at)
		return
	}
	c.bus.Schedule(c.recovTimer, c.bus.NextRecessiveSequence(c.busOffSeq+128))
}

// clearCounters sets TEC and REC to 0: after bus-off recovery, and on entering
// Configuration mode ("When Configuration mode is entered, all error counters are
// cleared", datasheet §10.1). With TEC at 0 the chip is error-active, not bus-off.
func (c *Chip) clearCounters(at int64) {
	c.tec, c.rec, c.busOff = 0, 0, false
	c.bus.Cancel(c.recovTimer)
	c.errState(at)
}
