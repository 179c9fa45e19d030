package mcpchip

// requestMode applies CANCTRL.REQOP: at once, or once no transmission is pending
// ("the mode will not actually change until all pending message transmissions are
// complete", datasheet §10). Reserved REQOP values (101..111) are ignored: OPMOD stays.
func (c *Chip) requestMode(at int64) {
	c.modeWait = false
	req := c.r[regCANCTRL] & canctrlREQOP
	if req > modeConfig || req == c.opmod() {
		return
	}
	if c.txPending() {
		c.modeWait = true
		return
	}
	old := c.opmod()
	c.r[regCANSTAT] = c.r[regCANSTAT]&^canstatOPMOD | req
	if !onBus(old) && onBus(req) {
		c.join(at)
	}
	switch {
	case req == modeConfig:
		c.clearCounters(at)
	case c.busOff:
		c.restartRecovery(at)
	}
	c.kickTx(at)
}

// onBus reports whether mode m takes part in bus traffic.
func onBus(m uint8) bool { return m == modeNormal || m == modeListen }

// join starts bus integration: the chip takes part once it has seen 11 consecutive
// recessive bits (after its oscillator start-up, if that is still running). A frame
// already on the wire ends with 11 (ACK delimiter, EOF, intermission), an error
// frame with 11 (delimiter, intermission), so the chip takes part in the first
// frame that starts at least 11 bit times after it came on the bus, once the bus
// has counted a sequence of 11 recessive bits since (none while it is stuck).
func (c *Chip) join(at int64) {
	c.joined = false
	c.joinAt = max(at, c.readyAt) + c.bus.Bits(11)
	c.joinSeq = c.bus.RecessiveSequences(at)
	c.bus.Schedule(c.joinTimer, c.joinAt)
}

// integrate is called at every start of frame (and every error tick of a stuck bus):
// it decides whether the chip takes part in what follows.
func (c *Chip) integrate(at int64) {
	if !c.joined && at >= c.joinAt && c.bus.RecessiveSequences(at) > c.joinSeq {
		c.joined = true
	}
}

// txPending reports whether a transmission is pending in a mode that sends: Normal
// or Loopback with a TXREQ set. Listen-only, Sleep and Configuration mode send
// nothing, so a TXREQ set there does not hold a mode change.
func (c *Chip) txPending() bool {
	if m := c.opmod(); m != modeNormal && m != modeLoopback {
		return false
	}
	for n := 0; n < 3; n++ {
		if c.r[txBase(n)]&txbTXREQ != 0 {
			return true
		}
	}
	return false
}

// modeDone is called when a TXREQ cleared (sent, failed in one-shot mode, aborted):
// a waiting mode change applies once none is pending.
func (c *Chip) modeDone(at int64) {
	if c.modeWait {
		c.requestMode(at)
	}
}

// wake leaves Sleep into Listen-only mode (datasheet §10.2); REQOP follows. The
// oscillator starts again: the oscillator start-up timer runs as after power-on
// (§8.1), and SPI is ignored until it expires.
func (c *Chip) wake(at int64) {
	c.readyAt = at + c.ostNs()
	c.r[regCANCTRL] = c.r[regCANCTRL]&^canctrlREQOP | modeListen
	c.requestMode(at)
}

// bitNs is the chip's nominal bit time from CNF1..3 (datasheet §5): TQ = 2·(BRP+1)/Fosc;
// bit = SyncSeg(1) + PropSeg + PS1 + PS2 TQ, PS2 from CNF3 if BTLMODE, else max(PS1, 2).
func (c *Chip) bitNs() int64 {
	brp, tq := c.timing()
	return 2 * brp * tq * 1_000_000_000 / int64(c.osc)
}

// timing returns BRP+1 and the bit length in TQ from CNF1..3.
func (c *Chip) timing() (brp, tq int64) {
	cnf1, cnf2, cnf3 := c.r[regCNF1], c.r[regCNF2], c.r[regCNF3]
	brp = int64(cnf1&cnf1BRP) + 1
	prop := int64(cnf2&cnf2PRSEG) + 1
	ps1 := int64(cnf2&cnf2PHSEG1>>cnf2PHSEG1S) + 1
	ps2 := ps1
	if ps2 < 2 {
		ps2 = 2
	}
	if cnf2&cnf2BTLMODE != 0 {
		ps2 = int64(cnf3&cnf3PHSEG2) + 1
	}
	return brp, 1 + prop + ps1 + ps2
}

// Garbled implements canbus.Garbler: the chip's bit time is more than 1.5 % off the
// bus's, so it cannot follow the bus.
func (c *Chip) Garbled(at int64) bool {
	if !c.onBus {
		return false
	}
	brp, tq := c.timing()
	den := 2 * brp * tq * int64(c.bus.Bitrate()) // oscillator Hz this timing needs
	d := int64(c.osc) - den
	if d < 0 {
		d = -d
	}
	return d*1000 > den*15
}

// chipBits is n bits at the chip's own bit time (loopback).
func (c *Chip) chipBits(n int) int64 { return int64(n) * c.bitNs() }
