package mcpchip

// What a fault cost the MCU, for tests that account for every frame.

// RXHeld is how many received frames wait in RXB0 and RXB1 for the MCU to read
// them (RXnIF set). It takes the world lock.
func (c *Chip) RXHeld() int {
	c.bus.Lock()
	defer c.bus.Unlock()
	return c.rxHeld()
}

func (c *Chip) rxHeld() int {
	n := 0
	for _, f := range []uint8{intRX0, intRX1} {
		if c.r[regCANINTF]&f != 0 {
			n++
		}
	}
	return n
}

// PowerCycleLosing is PowerCycle that also reports how many received frames the
// reset wiped from RXB0 and RXB1 before the MCU read them.
func (c *Chip) PowerCycleLosing(at int64) (wiped int) {
	c.bus.Lock()
	defer c.bus.Unlock()
	c.bus.AdvanceTo(at)
	wiped = c.rxHeld()
	c.powerOn(at)
	return wiped
}
