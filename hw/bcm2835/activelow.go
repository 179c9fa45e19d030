package bcm2835

// ActiveLow is an active-low input read through the GPIO level register (GPLEVn,
// BCM2835 ARM Peripherals §6.1): asserted while the pin reads low, such as the
// MCP2515's INT output. Asserted is one register load: no lock, no syscall, no
// allocation, so the owner thread re-checks a level with it on its hot path. It
// has the method set of mcp2515.IntLine.
type ActiveLow struct {
	g   *GPIO
	pin int
}

// ActiveLow returns pin as an active-low input line.
func (g *GPIO) ActiveLow(pin int) ActiveLow { return ActiveLow{g: g, pin: pin} }

// Asserted reports whether the pin reads low.
func (l ActiveLow) Asserted() bool { return !l.g.Level(l.pin) }
