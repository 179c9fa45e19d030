package mcp2515

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
	c.tx[0] = InstrReadRxBuf | byte(n)*RxBufRXB1SIDH
	clear(c.tx[1:rxReadLen])
	if s, ok := c.spi.(SPIThen); ok {
		clear(c.rx[rxHeadLen:rxReadLen])
		return s.TransferThen(OpReadRxBuf, c.tx[:rxReadLen], c.rx[:rxReadLen], rxHeadLen, rxDataLen)
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
	if sidl&SIDLEXIDE != 0 {
		remote = dlc&DLCRTR != 0
	} else {
		remote = sidl&SIDLSRR != 0
	}
	return min(dlc&DLCMask, 8), remote
}
