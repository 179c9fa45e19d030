// Package mcpchip is the virtual Pi's MCP2515: a model of the chip's silicon from its
// datasheet (DS20001801J) and errata (DS80179G), driven through its SPI pins and its
// INT pin and attached to a canbus.Bus as a CAN node. It is not a mock of a driver:
// a wrong instruction, a wrong order, a missing flag clear, out-of-order buffer reads,
// CS held low after a TXREQ write, a too-fast SCLK or an unsupported SPI mode all show
// as the chip's wrong behaviour.
//
// Model choices where the datasheet leaves room (each also noted at its code):
//   - Oscillator start-up: after power-on (New), after RESET and after a wake-up from
//     Sleep mode (datasheet §8.1) the chip ignores SPI for 128 OSC1 cycles;
//     meanwhile MISO reads 0xFF (SO undriven, read as ones) and the bytes are
//     counted in Stats.Ignored. A wake-up keeps the registers; the chip comes on the
//     bus (bus integration) once the start-up time is over.
//   - MISO is 0xFF (undriven) during instruction/address bytes and while CS is high.
//   - SPI modes 1 and 2, and SCLK > 10 MHz, corrupt the exchange: the chip samples MOSI
//     one bit late (it decodes mosi>>1 with the previous byte's LSB on top) and the
//     master samples MISO one bit late (miso>>1 | 0x80). Counted in Stats.Corrupted.
//   - RTS and a WRITE/BIT MODIFY of TXREQ take effect at the end of their byte.
//   - A REQOP change takes effect at once (OPMOD follows immediately) unless a
//     transmission is pending in Normal or Loopback mode; then when the last pending
//     buffer's TXREQ clears: sent, failed in one-shot mode, or aborted (datasheet
//     §10). A frame that keeps failing holds the change until ABAT or a TXREQ clear.
//     Listen-only, Sleep and Configuration mode send nothing: a TXREQ set there does
//     not hold a change from them.
//   - The TXnRTS and RXnBF pins are not connected: TXRTSCTRL.BnRTS read 1 (the pins'
//     pull-ups) in digital-input mode, and no pin ever requests a transmission.
//   - Interrupt flags are set whatever CANINTE says; CANINTE only gates the INT pin.
//   - ERRIF cannot be cleared while EFLG.RX0OVR or RX1OVR is set (the datasheet's "a
//     flag cannot be cleared while its condition persists"): clear EFLG first.
//   - One-shot and aborted transmissions that fail do not set TXnIF: TXREQ clears and
//     MLOA/TXERR/ABTF tell why (TXERR also sets MERRF).
//   - A frame is received (and ACKed) only when the chip's bit time from CNF1..3 and
//     the oscillator is within 1.5 % of the bus bitrate; otherwise every frame is an
//     error for it and every frame it sends is destroyed (canbus.Garbler).
//   - Bus integration (ISO 11898-1): coming on the bus (Normal or Listen-only mode
//     from Configuration, Sleep or Loopback mode) the chip waits for 11 consecutive
//     recessive bits before it takes part. It neither receives, ACKs nor counts
//     errors for a frame that started before, starts no frame before, and on a bus
//     stuck dominant it waits until the bus is released.
//   - Bus-off recovery counts 128 sequences of 11 recessive bits (canbus counts them);
//     Sleep mode suspends it and restarts the count. Entering Configuration mode
//     clears TEC and REC (datasheet §10.1), which ends bus-off; EFLG follows, and
//     its change sets ERRIF as any other does.
//   - Error counters: ISO 11898-1 rules as simplified in canbus (transmitter +8,
//     receiver +1, +8 per 8 dominant bits on a stuck bus, −1 on success, REC back to
//     127 on success above 127, error-passive ACK errors do not count); REC saturates
//     at 255; in bus-off TEC reads 255. Listen-only counts nothing (MERRF still sets).
package mcpchip

import (
	"go.einride.tech/can"

	"cand/sim/canbus"
)

// Stats are the chip's counters, for tests.
type Stats struct {
	Received  uint64 // frames loaded into RXB0/RXB1
	Lost      uint64 // accepted frames lost because the buffer was full (RXnOVR)
	Sent      uint64 // frames transmitted successfully, repeats included
	Repeats   uint64 // frames repeated by erratum 5 (CS held low after a TXREQ write)
	Corrupted uint64 // SPI exchanges in an unsupported mode or above 10 MHz
	Ignored   uint64 // SPI bytes ignored during the oscillator start-up time
	TxErrors  uint64
	RxErrors  uint64
	ArbLost   uint64
	Aborted   uint64
}

// Chip is one MCP2515. All state is protected by the bus's world lock.
type Chip struct {
	bus     *canbus.Bus
	onBus   bool // attached to a bus with a wire
	osc     uint32
	r       [regFileSize]byte
	readyAt int64
	onINT   func(level bool, at int64)
	intHigh bool
	absent  bool // unplugged (Unplug): MISO floats high, nothing is clocked in
	// unplugAtCSRise: unplugged during a transfer, absent from CS's rise (Unplug).
	unplugAtCSRise bool

	spi spiState

	// transmit
	cand     int     // buffer offered by the last Pending
	txBuf    int     // buffer on the wire (bus or loopback), -1 if none
	abortReq [3]bool // MCU asked to abort while the buffer was on the wire
	errata   uint8   // buffers whose TXREQ was set in the current CS-low session (erratum 5)
	lbTimer  *canbus.Timer
	lbIdle   int64
	lbFrame  can.Frame
	modeWait bool // a REQOP change waits for the pending transmissions

	// bus integration (join): the chip takes part in the frame on the bus if joined
	// held at its start: it started joinAt or later, after a sequence of 11
	// recessive bits that began after the chip came on the bus (past joinSeq)
	joined    bool
	joinAt    int64
	joinSeq   int64
	joinTimer *canbus.Timer // starts a pending transmission once integrated

	// errors
	tec, rec   int
	busOff     bool
	busOffSeq  int64
	recovTimer *canbus.Timer

	stats Stats
}

var (
	_ canbus.Node    = (*Chip)(nil)
	_ canbus.Garbler = (*Chip)(nil)
)

// New returns a powered-on chip with an oscHz crystal (0 means 16 MHz), attached to
// bus. bus may be nil: the chip then lives in a private world without a wire
// (register-only tests; loopback still works).
func New(oscHz uint32, bus *canbus.Bus) *Chip {
	if oscHz == 0 {
		oscHz = 16_000_000
	}
	c := &Chip{bus: bus, osc: oscHz, intHigh: true, txBuf: -1, cand: -1}
	if bus == nil {
		c.bus = canbus.New(0)
	} else {
		c.onBus = bus.Bitrate() != 0
	}
	c.lbTimer = canbus.NewTimer(c.loopbackDone)
	c.recovTimer = canbus.NewTimer(c.checkRecovery)
	c.joinTimer = canbus.NewTimer(c.kickTx)
	c.powerOn(c.bus.Clock().Now())
	if bus != nil {
		bus.Attach(c)
	}
	return c
}

// Bus returns the chip's world (the bus it is attached to, or its private one).
func (c *Chip) Bus() *canbus.Bus { return c.bus }

// ostNs is the oscillator start-up time: 128 OSC1 cycles.
func (c *Chip) ostNs() int64 {
	return int64(ostCycles) * 1_000_000_000 / int64(c.osc)
}

// powerOn sets the power-on/reset state and starts the oscillator start-up timer.
func (c *Chip) powerOn(at int64) {
	c.r = [regFileSize]byte{}
	c.r[regCANSTAT] = modeConfig
	c.r[regCANCTRL] = canctrlAtPOR
	c.tec, c.rec, c.busOff = 0, 0, false
	c.bus.Cancel(c.lbTimer)
	c.bus.Cancel(c.recovTimer)
	c.bus.Cancel(c.joinTimer)
	c.txBuf, c.cand, c.modeWait = -1, -1, false
	c.abortReq = [3]bool{}
	c.errata = 0
	c.readyAt = at + c.ostNs()
	c.updateINT(at)
}

// OnINT registers fn, called on every INT level change with the world lock held;
// fn must not block.
func (c *Chip) OnINT(fn func(level bool, at int64)) {
	c.bus.Lock()
	c.onINT = fn
	c.bus.Unlock()
}

// Level is the INT pin at time at (soc.PinSource): low while CANINTF & CANINTE != 0.
func (c *Chip) Level(at int64) bool {
	c.bus.Lock()
	defer c.bus.Unlock()
	c.bus.AdvanceTo(at)
	return c.intHigh
}

// Stats returns the chip's counters.
func (c *Chip) Stats() Stats {
	c.bus.Lock()
	defer c.bus.Unlock()
	return c.stats
}

// setFlags sets CANINTF bits and updates INT.
func (c *Chip) setFlags(bits uint8, at int64) {
	c.r[regCANINTF] |= bits
	c.updateINT(at)
}

// updateINT recomputes the INT pin and reports a change.
func (c *Chip) updateINT(at int64) {
	high := c.r[regCANINTF]&c.r[regCANINTE] == 0
	if high == c.intHigh {
		return
	}
	c.intHigh = high
	if c.onINT != nil {
		c.onINT(high, at)
	}
}

// icod is CANSTAT.ICOD: the highest-priority enabled pending interrupt.
func (c *Chip) icod() uint8 {
	p := c.r[regCANINTF] & c.r[regCANINTE]
	switch {
	case p&intERR != 0:
		return icodERR
	case p&intWAK != 0:
		return icodWAK
	case p&intTX0 != 0:
		return icodTXB0
	case p&intTX1 != 0:
		return icodTXB1
	case p&intTX2 != 0:
		return icodTXB2
	case p&intRX0 != 0:
		return icodRXB0
	case p&intRX1 != 0:
		return icodRXB1
	}
	return icodNone
}
