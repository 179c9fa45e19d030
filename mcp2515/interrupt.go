package mcp2515

import "errors"

// maxPasses bounds one interrupt's work so a stuck INT line cannot spin the owner
// thread forever; the caller re-arms and comes back.
const maxPasses = 16

// HandleInterrupt services the chip until INT is released: each pass is one READ
// STATUS (2 bytes), then one READ RX BUFFER (6 header bytes and the frame's data
// bytes, at most 14; it also clears RXnIF when CS rises) per full buffer, their
// frames handed to the sink in bus order, then one BIT MODIFY for finished TX
// buffers (and Sink.TXFreed, which may load the next frames). When INT stays low
// with no RX/TX flag, the error pass reads the error registers. An isolated received frame
// costs exactly 2 transfers and 8 + its data length bytes (16 for 8 data bytes;
// 16 for any frame over an SPI that cannot lengthen a transfer, readRxBuf).
//
// It returns done=false if INT was still asserted after maxPasses passes, and
// ErrNoChip if READ STATUS reads 0xFF: MISO floating, no chip answering. An RX
// read-back that is no frame is dropped and the chip checked (rxcheck.go): found
// reset, it is reported as an ErrorEvent with ChipReset and the handling ends;
// not answering, ErrNoChip.
func (c *Controller) HandleInterrupt(sink Sink) (done bool, err error) {
	for pass := 0; pass < maxPasses; pass++ {
		pending := c.nPending
		work, err := c.statusPass(sink, pass, errByLevel)
		if errors.Is(err, errReinit) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		if c.nPending < pending {
			sink.TXFreed()
		}
		if !c.intr.Asserted() {
			c.sawEmpty(StatusRXAll, c.statusAt) // INT high: no flag set
			return true, nil
		}
		if !work {
			// INT low, no RX/TX flag: error, wake-up or message error.
			if err := c.errorPass(sink); err != nil {
				return false, err
			}
			if !c.intr.Asserted() {
				c.sawEmpty(StatusRXAll, c.statusAt)
				return true, nil
			}
			c.stats.SpuriousInterrupts++
		}
	}
	return false, nil
}

// errChecks is when a status pass that read RX buffers also checks the error flags.
type errChecks uint8

const (
	errByLevel errChecks = iota // INT's level can be trusted: HandleInterrupt
	errAlways                   // the line may be stuck: Poll
	errNever                    // off the bus, the error flags are not the bus's: Hold
)

// statusPass is one READ STATUS and what it shows: the full RX buffers read in bus
// order, finished TX buffers released, and pending ones the chip gave up reported.
// work reports RX or TX flags. pass is the pass's number within the interrupt;
// errs says when the error flags are checked besides.
func (c *Controller) statusPass(sink Sink, pass int, errs errChecks) (work bool, err error) {
	c.stats.Passes++
	c.statusAt = c.now()
	c.tx[0], c.tx[1] = InstrReadStatus, 0
	if err := c.spi.Transfer(OpReadStatus, c.tx[:2], c.rx[:2]); err != nil {
		return false, err
	}
	st := Status(c.rx[1])
	c.passRX = st&StatusRXAll != 0
	if st == 0xFF {
		// Both RX flags, every TXnIF and every TXREQ at once cannot be: a buffer's
		// TXnIF sets as its TXREQ clears (datasheet §3.3). MISO floats high: no
		// chip answers, and what the RX buffers would read is no frame.
		return false, ErrNoChip
	}
	if empty := ^st & StatusRXAll; empty != 0 {
		c.sawEmpty(empty, c.statusAt)
	}
	if st&StatusRXAll != 0 {
		work = true
		if err := c.drainRX(st, sink); err != nil {
			return false, err
		}
		// READ STATUS does not show ERRIF. Under sustained traffic a pass always
		// finds RX work, so the error pass would never run: check the error flags
		// when both buffers were full (the only time a frame can overflow) and
		// every few busy passes. An overflow sets ERRIF, which holds INT low
		// (CANINTE.ERRIE is on, intEnable; MCP2515 datasheet DS20001801J §7.4):
		// with INT high after both were read, nothing overflowed and nothing else
		// is flagged, so the level read spares the READ.
		both := st&StatusRXAll == StatusRXAll
		if errs != errNever && ((both && (errs == errAlways || c.intr.Asserted())) || pass%4 == 3) {
			if err := c.errorCheck(sink); err != nil {
				return false, err
			}
		}
	}
	if txif := st & StatusTXAll; txif != 0 {
		work = true
		if err := c.txDone(txif, sink); err != nil {
			return false, err
		}
	}
	if c.nPending > 0 || c.aborting {
		if err := c.txGone(st, sink); err != nil {
			return false, err
		}
	}
	return work, nil
}

// Poll services the chip without looking at INT: status passes until one finds
// no RX or TX flag (at most maxPasses), then the error pass (which also checks that
// the chip kept its configuration). It is how the owner services a chip whose INT
// line cannot tell it when (stuck low): 2 transfers when nothing is flagged.
func (c *Controller) Poll(sink Sink) error {
	for pass := 0; pass < maxPasses; pass++ {
		pending := c.nPending
		work, err := c.statusPass(sink, pass, errAlways)
		if errors.Is(err, errReinit) {
			return nil
		}
		if err != nil {
			return err
		}
		if c.nPending < pending {
			sink.TXFreed()
		}
		if !work {
			break
		}
	}
	return c.errorPass(sink)
}
