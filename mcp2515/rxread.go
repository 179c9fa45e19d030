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

// readRxBuf clocks READ RX BUFFER n into c.rx[:rxReadLen]. Over an SPIThen it is
// one transfer of the header and then only the data bytes the frame carries
// (rxDataLen), CS held low between them; the bytes not clocked read 0. Over a
// plain SPI it clocks all 14 bytes.
func (c *Controller) readRxBuf(n int) error {
	c.tx[0] = InstrReadRxBuf | byte(n)*RxBufRXB1SIDH
	clear(c.tx[1:rxReadLen])
	if s, ok := c.spi.(SPIThen); ok {
		clear(c.rx[rxHeadLen:rxReadLen])
		_, err := s.TransferThen(OpReadRxBuf, c.tx[:rxReadLen], c.rx[:rxReadLen], rxHeadLen, rxDataLen)
		return err
	}
	return c.spi.Transfer(OpReadRxBuf, c.tx[:rxReadLen], c.rx[:rxReadLen])
}

// rxDataLen is how many data bytes follow a READ RX BUFFER header (instruction,
// SIDH, SIDL, EID8, EID0, DLC): none for a remote frame (RTR: SIDL.SRR for a
// standard identifier, DLC.RTR for an extended one), else the DLC, 9..15 meaning 8
// as in classic CAN.
func rxDataLen(head []byte) int {
	sidl, dlc := head[BufSIDL], head[BufDLC]
	if sidl&SIDLEXIDE != 0 && dlc&DLCRTR != 0 || sidl&SIDLEXIDE == 0 && sidl&SIDLSRR != 0 {
		return 0
	}
	return int(min(dlc&DLCMask, 8))
}
