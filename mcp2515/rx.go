package mcp2515

import "go.einride.tech/can"

// The RX read: the full RX buffers a status pass found, read in bus order
// (drainRX), each with one READ RX BUFFER (readRxBuf) whose read-back is checked
// (rxcheck.go) and decoded into the controller's frame for that buffer.

// drainRX reads the full RX buffers and hands their frames to the sink in the
// order they arrived. With both full, both are read before either is delivered, so
// that the order can be decided with the frames' lengths (rxorder.go).
func (c *Controller) drainRX(st Status, sink Sink) error {
	switch st & StatusRXAll {
	case StatusRX0IF:
		return c.readRX(0, sink)
	case StatusRX1IF:
		return c.readRX(1, sink)
	}
	e0, e1, at := c.rxEmpty[0], c.rxEmpty[1], c.now()
	if ok, err := c.fetchRX(0, sink); !ok {
		if err != nil {
			return err
		}
		return c.readRX(1, sink)
	}
	sink.BothFull(c.now() - c.statusAt)
	if ok, err := c.fetchRX(1, sink); !ok {
		sink.Received(&c.frames[0])
		return err
	}
	first := 0
	if c.rxb1First(e0, e1, at) {
		first = 1
	}
	sink.Received(&c.frames[first])
	sink.Received(&c.frames[1-first])
	return nil
}

// readRX reads RX buffer n and hands its frame to the sink.
func (c *Controller) readRX(n int, sink Sink) error {
	ok, err := c.fetchRX(n, sink)
	if ok {
		sink.Received(&c.frames[n])
	}
	return err
}

// fetchRX reads RX buffer n with READ RX BUFFER (the flag clears when CS rises) into
// c.frames[n]. ok is false if the read-back was no frame (rxcheck.go).
func (c *Controller) fetchRX(n int, sink Sink) (ok bool, err error) {
	at := c.now()
	k, err := c.readRxBuf(n)
	if err != nil {
		return false, err
	}
	c.sawEmpty(StatusRXnIF(n), at+minTransferNs(k)) // RXnIF cleared at the CS rise
	if ok, err := c.isFrame(c.rx[1:6], sink); !ok {
		return false, err
	}
	decodeRX(&c.frames[n], c.rx[1:14])
	return true, nil
}

// decodeRX decodes SIDH, SIDL, EID8, EID0, DLC, D0..D7 of an RX buffer.
func decodeRX(f *can.Frame, b []byte) {
	_ = b[12]
	id, ext := GetID(b[0:4])
	f.ID = id
	f.IsExtended = ext
	dlc, remote := rxShape(b[1], b[4]) // SIDL, DLC
	f.Length, f.IsRemote = dlc, remote
	f.Data = can.Data{}
	if !f.IsRemote {
		copy(f.Data[:dlc], b[5:5+dlc])
	}
}

// READ RX BUFFER from SIDH (datasheet DS20001801J §12.4): the instruction, the
// five header bytes SIDH, SIDL, EID8, EID0, DLC, then D0..D7; the address keeps
// incrementing while CS stays low, and the buffer's RXnIF clears when CS rises.
// After the instruction byte the bytes come at their offsets in the buffer
// (BufSIDH..BufDLC).
const (
	rxHeadLen = BufDLC + 1    // instruction + SIDH..DLC
	rxReadLen = rxHeadLen + 8 // ... + D0..D7
)

// readRxBuf clocks READ RX BUFFER n into c.rx[:rxReadLen] and returns the bytes
// clocked. Over an SPIThen it is one transfer of the header and then only the data
// bytes the frame carries (rxDataLen), CS held low between them; the bytes not
// clocked read 0. Over a plain SPI it clocks all 14 bytes.
func (c *Controller) readRxBuf(n int) (int, error) {
	c.tx[0] = ReadRxBuf(n)
	clear(c.tx[1:rxReadLen])
	if c.then != nil {
		clear(c.rx[rxHeadLen:rxReadLen])
		return c.then.TransferThen(OpReadRxBuf, c.tx[:rxReadLen], c.rx[:rxReadLen], rxHeadLen, rxDataLen)
	}
	return rxReadLen, c.spi.Transfer(OpReadRxBuf, c.tx[:rxReadLen], c.rx[:rxReadLen])
}

// rxDataLen is how many data bytes follow a READ RX BUFFER header (instruction,
// SIDH, SIDL, EID8, EID0, DLC): none for a remote frame, else its length.
func rxDataLen(head []byte) int {
	length, remote := rxShape(head[BufSIDL], head[BufDLC])
	if remote {
		return 0
	}
	return int(length)
}

// rxShape reads a received frame's length and RTR from its SIDL and DLC registers:
// RTR is SIDL.SRR for a standard identifier and DLC.RTR for an extended one (IDE
// set); DLC 9..15 means 8 data bytes in classic CAN.
func rxShape(sidl, dlc byte) (length uint8, remote bool) {
	if Bits(sidl)&SIDLEXIDE != 0 {
		remote = Bits(dlc)&DLCRTR != 0
	} else {
		remote = Bits(sidl)&SIDLSRR != 0
	}
	return min(uint8(Bits(dlc)&DLCMask), 8), remote
}
