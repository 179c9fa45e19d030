package canwire

// The CAN CRC-15 (ISO 11898-1): generator x^15+x^14+x^10+x^8+x^7+x^4+x^3+1, register
// starting at 0, over the unstuffed bits from SOF to the end of the data field.
const crcPoly = 0x4599

// crcTable[b] is the register after shifting byte b, MSB first, through a register
// holding b in its top 8 bits' place: the byte-at-a-time form of the bitwise CRC.
// Built once when the package is initialised; only read afterwards.
var crcTable = makeCRCTable()

func makeCRCTable() (t [256]uint16) {
	for b := range t {
		crc := uint16(b) << 7
		for range 8 {
			if crc&0x4000 != 0 {
				crc = crc<<1 ^ crcPoly
			} else {
				crc <<= 1
			}
		}
		t[b] = crc & 0x7FFF
	}
	return t
}

// crc15 returns the CRC of the frame whose header (SOF to DLC, right-aligned in
// header) is followed by data. Leading 0 bits do not change a CRC whose register
// starts at 0, so the header is fed as the 5 whole bytes that hold it, high zero
// bits included, whatever its length.
func crc15(header uint64, data []byte) uint16 {
	var crc uint16
	for shift := 32; shift >= 0; shift -= 8 {
		crc = crcByte(crc, byte(header>>uint(shift)))
	}
	for _, b := range data {
		crc = crcByte(crc, b)
	}
	return crc
}

func crcByte(crc uint16, b byte) uint16 {
	return (crc<<8 ^ crcTable[byte(crc>>7)^b]) & 0x7FFF
}
