// Package soc models the virtual Pi's BCM2835 at register level: the SPI0 block
// (CS, FIFO, CLK, DLEN; 64-byte FIFOs; wire time of 9 SCLK periods per byte in
// polled mode), the GPIO block (function select, set/clear, levels, pulls), and the
// pins that connect them to SPI slaves and interrupt outputs.
package soc

// SPISlave is a device on the SPI bus as the wires see it. Times are the SoC's
// clock (sim/clock: CLOCK_MONOTONIC ns minus host stalls) at which the edge happens
// on the wire, which may be a little before the model evaluates it: the SPI0 model
// shifts bytes lazily when the driver next touches a register.
type SPISlave interface {
	// SetCS is called when the slave's chip-select input reaches its active level
	// (active=true) or leaves it.
	SetCS(active bool, at int64)
	// Exchange shifts one byte: mosi in, the returned byte out, clocked in SPI mode
	// (0..3, CPOL<<1|CPHA) at sclkHz. A slave returns what its silicon would for a
	// mode or clock it does not support (garbage), not an error.
	Exchange(mosi byte, mode uint8, sclkHz uint32, at int64) (miso byte)
}

// PinSource drives a GPIO input from outside the SoC (e.g. the MCP2515's INT output).
type PinSource interface {
	// Level is the pin's electrical level at time at (true = high).
	Level(at int64) bool
}
