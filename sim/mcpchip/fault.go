package mcpchip

// Faults of the chip itself, for the driver's chip-health tests.

// PowerCycle resets the chip as a brown-out would: every register back to its
// power-on value (Configuration mode, CNF and CANINTE cleared), TX/RX state and error
// counters gone, then the oscillator start-up time. It takes the world lock.
func (c *Chip) PowerCycle(at int64) {
	c.bus.Lock()
	defer c.bus.Unlock()
	c.bus.AdvanceTo(at)
	c.powerOn(at)
}

// Unplug disconnects the chip from SPI (unplugged = true): MISO floats high (0xFF)
// and nothing it is sent has an effect, as with a loose wire. It takes effect
// between transfers: during one (CS asserted) at CS's rise, so that a test of the
// driver's recovery does not also tear the frame being read, which no driver can
// tell from the bytes (docs/faults.md). Plugging back in takes effect at once. It
// takes the lock.
func (c *Chip) Unplug(unplugged bool) {
	c.bus.Lock()
	defer c.bus.Unlock()
	c.unplugAtCSRise = unplugged && c.spi.cs
	c.absent = unplugged && !c.spi.cs
}
