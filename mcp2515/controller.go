package mcp2515

import (
	"errors"
	"fmt"
	"time"

	"go.einride.tech/can"

	"cand/canstate"
)

// IntLine reports the level of the MCP2515's INT output (active low). On the Pi it
// is read through the GPIO level register: no syscall, so the driver can re-check
// the level after every pass and emulate level-triggered interrupts over the edge
// events the GPIO character device delivers.
type IntLine interface {
	Asserted() bool // INT is low: some enabled flag is set
}

// Sink receives what the controller finds while servicing an interrupt. It is called
// on the owner thread, in bus order, and must not block.
type Sink interface {
	// Received is called right after the frame's READ RX BUFFER transfer.
	Received(f *can.Frame)
	// Transmitted is called when TX buffer buf has sent its frame.
	Transmitted(buf int)
	// TxFailed is called when TX buffer buf gave up its frame unsent: aborted (TX
	// timeout) or failed in one-shot mode.
	TxFailed(buf int)
	// TXFreed is called after a status pass of HandleInterrupt or Poll that
	// released TX buffers (Transmitted, TxFailed), before the next pass: the sink
	// may call Transmit, so that under sustained RX traffic, which keeps INT low
	// from pass to pass, a waiting frame is not held back until the interrupt ends.
	TXFreed()
	// Error is called when the bus state changes or errors are flagged.
	Error(e *ErrorEvent)
	// BothFull reports, when a status read found both RX buffers full, how long
	// they were seen full: from that READ STATUS to the CS rise that freed the
	// first (a lower bound: the chip does not say when the second one filled).
	BothFull(ns int64)
}

// Config is what the controller programs at Init.
type Config struct {
	CNF1, CNF2, CNF3 byte // bit timing (see CalcBitTiming)
	Mode             Mode // ModeNormal, ModeListenOnly or ModeLoopback
	OneShot          bool // CANCTRL.OSM: no automatic retransmission
	Filters          *Filters
	// TXBuffers limits how many of the three TX buffers are used (1..3; 0 = 3).
	TXBuffers int
	// Bitrate bounds how soon two frames can arrive one after the other (rxorder.go).
	Bitrate uint32
}

// Filters are RXM0/RXM1 and RXF0..RXF5 as 29-bit values with an extended flag.
type Filters struct {
	Mask     [2]FilterID
	Filter   [6]FilterID
	NFilters int  // filters actually configured; unused ones copy filter 0 of their buffer
	Rollover bool // RXB0CTRL.BUKT
}

// FilterID is one mask or filter.
type FilterID struct {
	ID       uint32
	Extended bool
}

// Controller drives one MCP2515. It is not safe for concurrent use: one owner
// thread calls every method. No method on the frame path allocates.
type Controller struct {
	spi  SPI
	then SPIThen // spi, if it can lengthen a transfer (rx.go); else nil
	intr IntLine
	cfg  Config

	// Scratch buffers for every transfer. They live in the Controller (allocated
	// once) because a slice passed through the SPI interface escapes.
	tx [24]byte
	rx [24]byte

	// TX state: which buffers are loaded and pending, and the TXP given to the
	// newest one. Frames get strictly decreasing TXP so the chip sends them in load
	// order (it picks the highest TXP; on a tie the highest buffer number).
	txPending [3]bool
	txPrio    [3]byte
	nPending  int
	lastPrio  byte
	maxTX     int
	aborting  bool // ABAT set: waiting for the pending buffers to be released

	// RX order (rxorder.go): when each RX buffer was last known empty.
	rxEmpty  [2]rxEmpty
	obs      uint64 // observations of the RX buffers so far (rxEmpty.seq)
	statusAt int64  // when the current pass's READ STATUS started
	passRX   bool   // the current pass's READ STATUS showed a full RX buffer
	state    canstate.State
	lastEFLG byte
	stats    Stats
	frames   [2]can.Frame // as read from RXB0, RXB1
	errEv    ErrorEvent
	now      func() int64
}

// Stats are the controller's own counters (the metrics package exports them).
type Stats struct {
	RXFrames, TXFrames uint64
	RXOverflows        uint64 // frames the chip dropped: both buffers full (RXnOVR)
	MessageErrors      uint64 // MERRF
	Passes             uint64 // status passes
	RXOrderUncertain   uint64 // both RX buffers full and their order not knowable (rxorder.go)
	RXInvalidReads     uint64 // RX read-backs that were no frame, dropped (rxcheck.go)
	ErrorPasses        uint64
	SpuriousInterrupts uint64
}

// New returns a controller on spi with its INT line.
func New(spi SPI, intr IntLine, cfg Config, now func() int64) *Controller {
	then, _ := spi.(SPIThen)
	c := &Controller{spi: spi, then: then, intr: intr, now: now}
	c.SetConfig(cfg)
	return c
}

// SetConfig replaces what the next Init programs (bit timing, mode, filters);
// the chip is unchanged until then. Owner thread only, with no frame pending
// (after Stop or before Init).
func (c *Controller) SetConfig(cfg Config) {
	c.cfg = cfg
	c.maxTX = cfg.TXBuffers
	if c.maxTX <= 0 || c.maxTX > 3 {
		c.maxTX = 3
	}
}

// Stats returns a copy of the counters.
func (c *Controller) Stats() Stats { return c.stats }

// StatusAt is when the current (or last) status pass's READ STATUS started: the
// chip read of the frames that pass hands to the sink.
func (c *Controller) StatusAt() int64 { return c.statusAt }

// PassFoundRX reports whether the current (or last) status pass's READ STATUS
// showed a full RX buffer. A pass that showed none read both buffers empty: from
// then on the chip needs nothing until INT falls again (Sink.TXFreed may read the
// socket).
func (c *Controller) PassFoundRX() bool { return c.passRX }

// State is the last decoded bus state.
func (c *Controller) State() canstate.State { return c.state }

// ErrChipReset: the chip no longer holds the configuration Init wrote (CNF1..3,
// CANINTE): it reset itself (brown-out, supply glitch) and must be initialised again.
var ErrChipReset = errors.New("mcp2515: the chip lost its configuration (CNF/CANINTE read back changed): it reset itself, e.g. a brown-out")

// ErrNoChip: MISO reads all 0x00 or all 0xFF.
var ErrNoChip = errNoChip

var errNoChip = errors.New("mcp2515: no answer on SPI (MISO stuck at 0x00 or 0xFF): check wiring, chip select and power")

// ostMax bounds the oscillator start-up time after RESET: 128 OSC1 cycles (datasheet
// §8.1) at 1 MHz, the slowest oscillator drivers/net/can/spi/mcp251x.c accepts; 8 µs
// at 16 MHz.
const ostMax = OSTCycles * time.Second / 1_000_000

// Reset sends RESET, waits for the oscillator start-up, and checks that the chip
// is in Configuration mode with CANCTRL at its reset value.
func (c *Controller) Reset() error {
	c.tx[0] = InstrReset
	if err := c.spi.Transfer(OpReset, c.tx[:1], c.rx[:1]); err != nil {
		return err
	}
	// No SPI operation may be attempted before the start-up timer expires (§8.1):
	// wait for it, as the kernel's mcp251x_hw_reset does (it sleeps 5 ms). Then poll,
	// for up to a second; a bus that reads only 0x00/0xFF for 10 ms has no chip on it.
	time.Sleep(ostMax)
	start := time.Now()
	for {
		st, err := c.readReg(RegCANSTAT)
		if err != nil {
			return err
		}
		ctrl, err := c.readReg(RegCANCTRL)
		if err != nil {
			return err
		}
		if OPMOD(st) == ModeConfig && CANCTRLAfterReset(ctrl) {
			break
		}
		silent := (st == 0xFF && ctrl == 0xFF) || (st == 0 && ctrl == 0)
		if silent && time.Since(start) > 10*time.Millisecond {
			return errNoChip
		}
		if time.Since(start) > time.Second {
			return fmt.Errorf("mcp2515: not in configuration mode after RESET (CANSTAT 0x%02x, CANCTRL 0x%02x): wrong wiring or another device on this chip select?", st, ctrl)
		}
		time.Sleep(50 * time.Microsecond)
	}
	c.txPending = [3]bool{}
	c.nPending = 0
	c.aborting = false
	c.sawEmpty(StatusRXAll, c.now()) // RESET cleared RXnIF; nothing arrives before SetMode
	c.state = canstate.ErrorActive
	return nil
}

// Init resets the chip and programs bit timing, filters, interrupts and the mode.
func (c *Controller) Init() error {
	if err := c.Reset(); err != nil {
		return err
	}
	// CNF3, CNF2, CNF1 are consecutive (0x28..0x2A): one WRITE; CANINTE follows.
	ie := byte(intEnable)
	if err := c.writeRegs(RegCNF3, c.cfg.CNF3, c.cfg.CNF2, c.cfg.CNF1, ie); err != nil {
		return err
	}
	if err := c.programFilters(); err != nil {
		return err
	}
	for i := 0; i < 3; i++ {
		if err := c.writeReg(TXBnCTRL(i), 0); err != nil {
			return err
		}
	}
	c.txPrio = [3]byte{} // TXP 0, as just written: Transmit sets it again when it differs
	// Verify: a chip that is not there reads back 0x00 or 0xFF.
	got, err := c.readRegs(RegCNF3, 4)
	if err != nil {
		return err
	}
	if got[0] != c.cfg.CNF3 || got[1] != c.cfg.CNF2 || got[2] != c.cfg.CNF1 || got[3] != ie {
		return fmt.Errorf("mcp2515: bit timing did not stick (wrote CNF3..CNF1 %02x %02x %02x, read %02x %02x %02x): check SPI wiring and clock", c.cfg.CNF3, c.cfg.CNF2, c.cfg.CNF1, got[0], got[1], got[2])
	}
	return c.SetMode(c.cfg.Mode)
}

func (c *Controller) programFilters() error {
	f := c.cfg.Filters
	if f == nil {
		// Filters off: any message; rollover on (the kernel's 0x64 / 0x60).
		if err := c.writeReg(RegRXB0CTRL, RXBCTRLRXMAny|RXB0CTRLBUKT); err != nil {
			return err
		}
		return c.writeReg(RegRXB1CTRL, RXBCTRLRXMAny)
	}
	var b [4]byte
	for i := 0; i < 2; i++ {
		PutID(b[:], f.Mask[i].ID, f.Mask[i].Extended)
		if !f.Mask[i].Extended {
			b[1] &^= byte(SIDLEXIDE)
		}
		if err := c.writeRegs(RXMnSIDH(i), b[0], b[1], b[2], b[3]); err != nil {
			return err
		}
	}
	for i := 0; i < 6; i++ {
		PutID(b[:], f.Filter[i].ID, f.Filter[i].Extended)
		if err := c.writeRegs(RXFnSIDH(i), b[0], b[1], b[2], b[3]); err != nil {
			return err
		}
	}
	var b0 Bits // RXM = 00: filtered, standard and extended
	if f.Rollover {
		b0 |= RXB0CTRLBUKT
	}
	if err := c.writeReg(RegRXB0CTRL, b0); err != nil {
		return err
	}
	return c.writeReg(RegRXB1CTRL, 0)
}

// intEnable is what Init writes to CANINTE.
const intEnable = IntRX0 | IntRX1 | IntTX0 | IntTX1 | IntTX2 | IntERR | IntMERR

// Check reads CNF3..CNF1 and CANINTE back (one 6-byte READ) and compares them with
// what Init wrote. On a mismatch it reads CANCTRL: the reset pattern (the kernel's
// probe test, CANCTRLAfterReset) means the chip reset itself (ErrChipReset: a
// brown-out); anything else, e.g. all 0xFF or 0x00, means nothing answers (ErrNoChip).
// It is the idle-time health check: 1 transfer, 2 when something is wrong.
func (c *Controller) Check() error {
	got, err := c.readRegs(RegCNF3, 4)
	if err != nil {
		return err
	}
	if got[0] == c.cfg.CNF3 && got[1] == c.cfg.CNF2 && got[2] == c.cfg.CNF1 && Bits(got[3]) == intEnable {
		return nil
	}
	ctrl, err := c.readReg(RegCANCTRL)
	if err != nil {
		return err
	}
	if CANCTRLAfterReset(ctrl) {
		return ErrChipReset
	}
	return errNoChip
}

// SetMode requests an operating mode and waits until CANSTAT.OPMOD confirms it. The
// chip changes mode only once no transmission is pending (datasheet §10).
func (c *Controller) SetMode(mode Mode) error { return c.requestMode(mode, 0) }

// canctrl is CANCTRL for mode: REQOP, and OSM for a one-shot configuration.
func (c *Controller) canctrl(mode Mode) Bits {
	if c.cfg.OneShot {
		return REQOP(mode) | CANCTRLOSM
	}
	return REQOP(mode)
}

// requestMode writes CANCTRL (mode, OSM, extra) and waits until CANSTAT.OPMOD
// confirms the mode.
func (c *Controller) requestMode(mode Mode, extra Bits) error {
	if err := c.writeReg(RegCANCTRL, c.canctrl(mode)|extra); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Second)
	for {
		st, err := c.readReg(RegCANSTAT)
		if err != nil {
			return err
		}
		if OPMOD(st) == mode {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mcp2515: mode 0x%02x requested, CANSTAT still reports 0x%02x after 1s", mode, OPMOD(st))
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// Stop puts the chip back into Configuration mode: it leaves the bus. A pending frame
// that cannot go out (bus-off, no ACK) would hold the chip in its mode, so Stop
// requests Configuration mode with ABAT set: the chip aborts what is pending (a
// frame on the wire finishes its attempt) and then changes mode; ABAT is cleared
// afterwards. Aborted frames count in Pending until the next Init.
func (c *Controller) Stop() error {
	if err := c.writeReg(RegCANINTE, 0); err != nil {
		return err
	}
	if err := c.requestMode(ModeConfig, CANCTRLABAT); err != nil {
		return err
	}
	c.aborting = false
	return c.writeReg(RegCANCTRL, c.canctrl(ModeConfig))
}

// readReg reads one register's fields.
func (c *Controller) readReg(addr Addr) (Bits, error) {
	c.tx[0], c.tx[1], c.tx[2] = InstrRead, byte(addr), 0
	if err := c.spi.Transfer(OpRead, c.tx[:3], c.rx[:3]); err != nil {
		return 0, err
	}
	return Bits(c.rx[2]), nil
}

// readRegs reads n (≤ 14) consecutive registers; the result aliases c.rx.
func (c *Controller) readRegs(addr Addr, n int) ([]byte, error) {
	c.tx[0], c.tx[1] = InstrRead, byte(addr)
	clear(c.tx[2 : 2+n])
	if err := c.spi.Transfer(OpRead, c.tx[:2+n], c.rx[:2+n]); err != nil {
		return nil, err
	}
	return c.rx[2 : 2+n], nil
}

// writeRegs writes consecutive registers from addr, a byte each.
func (c *Controller) writeRegs(addr Addr, v ...byte) error {
	c.tx[0], c.tx[1] = InstrWrite, byte(addr)
	n := copy(c.tx[2:], v)
	return c.spi.Transfer(OpWrite, c.tx[:2+n], c.rx[:2+n])
}

// writeReg writes one register's fields.
func (c *Controller) writeReg(addr Addr, v Bits) error {
	c.tx[0], c.tx[1], c.tx[2] = InstrWrite, byte(addr), byte(v)
	return c.spi.Transfer(OpWrite, c.tx[:3], c.rx[:3])
}

// bitModify sets the fields of mask at addr to data's (datasheet §12.10; only on
// the registers IsBitModifiable names).
func (c *Controller) bitModify(addr Addr, mask, data Bits) error {
	c.tx[0], c.tx[1], c.tx[2], c.tx[3] = InstrBitModify, byte(addr), byte(mask), byte(data)
	return c.spi.Transfer(OpBitModify, c.tx[:4], c.rx[:4])
}
