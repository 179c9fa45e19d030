package mcp2515

import "errors"

// What an RX buffer read back can be besides a frame. A chip that does not drive
// MISO (unplugged, or in its oscillator start-up after a reset, datasheet §8.1)
// reads 0xFF; a chip that reset between READ STATUS and READ RX BUFFER, or a MISO
// stuck low, reads 0x00.
//
// 0xFF sets bits an RX buffer does not implement (RXBSIDLUnimplemented,
// RXBDLCUnimplemented): such a read-back is no frame. 0x00 in SIDH..DLC is a valid
// frame (standard ID 0, DLC 0) as well as a reset chip's buffer, so the chip is
// checked before it is delivered (one READ, and only for that frame).
//
// A read-back that is no frame is dropped and counted (Stats.RXInvalidReads), and
// the chip is checked: one that reset reports an ErrorEvent with ChipReset (the
// owner re-initialises it) and the interrupt ends; one that does not answer ends it
// with ErrNoChip.

// errReinit ends the interrupt's handling after the chip was found reset: the
// ChipReset event is reported, and nothing more is read from it.
var errReinit = errors.New("mcp2515: chip reset found by an RX read-back")

// isFrame tells whether the RX buffer's SIDH..DLC (hdr) are a frame's; if not, the
// error ends the interrupt (errReinit, ErrNoChip) or is nil for a chip that answers
// correctly again (the read-back dropped, the handling goes on).
func (c *Controller) isFrame(hdr []byte, sink Sink) (bool, error) {
	_ = hdr[4]
	unimplemented := Bits(hdr[1])&RXBSIDLUnimplemented != 0 || Bits(hdr[4])&RXBDLCUnimplemented != 0
	if !unimplemented && hdr[0]|hdr[1]|hdr[2]|hdr[3]|hdr[4] != 0 {
		return true, nil
	}
	err := c.Check()
	if err == nil {
		if !unimplemented {
			clear(hdr) // as read (Check reused the receive buffer): ID 0, DLC 0
			return true, nil
		}
		c.stats.RXInvalidReads++
		return false, nil
	}
	c.stats.RXInvalidReads++
	if errors.Is(err, ErrChipReset) {
		c.errEv = ErrorEvent{State: c.state, Prev: c.state, ChipReset: true}
		sink.Error(&c.errEv)
		return false, errReinit
	}
	return false, err
}
