package canwire

import "go.einride.tech/can"

// Wire layout of a classical CAN data or remote frame (ISO 11898-1), MSB first:
//
//	standard: SOF | ID[10:0] | RTR | IDE=0 | r0 | DLC[3:0] | data | CRC[14:0]
//	extended: SOF | ID[28:18] | SRR=1 | IDE=1 | ID[17:0] | RTR | r1 | r0 | DLC[3:0] | data | CRC[14:0]
//
// followed by the fixed-form tail, which is never stuffed: CRC delimiter, ACK
// slot, ACK delimiter, 7-bit EOF, then the 3-bit intermission. SOF, r0 and r1 are
// dominant (0); a remote frame sends its DLC but no data field.
const (
	stdHeaderBits = 1 + 11 + 1 + 1 + 1 + 4              // SOF to the end of DLC
	extHeaderBits = 1 + 11 + 1 + 1 + 18 + 1 + 1 + 1 + 4 // SOF to the end of DLC
	crcBits       = 15                                  // CRC sequence
	tailBits      = 1 + 1 + 1 + 7 + 3                   // CRC delim, ACK slot, ACK delim, EOF, intermission
	maxDataBytes  = 8
)

// Bits returns the number of bit times f occupies on the wire: start of frame to
// the end of EOF plus the 3-bit intermission, with the stuff bits the transmitter
// inserts after every five equal bits from SOF through the CRC sequence. A Length
// above 8 is taken as 8 (a classical CAN frame carries at most 8 bytes). It does
// not allocate.
func Bits(f *can.Frame) uint32 {
	n := min(int(f.Length), maxDataBytes)
	dlc := uint64(n)
	var rtr uint64
	if f.IsRemote {
		rtr = 1
		n = 0 // no data field
	}
	// The header from SOF to DLC as one number; SOF is its leading 0.
	var header uint64
	var headerBits uint
	if f.IsExtended {
		id := uint64(f.ID & can.MaxExtendedID)
		header = id>>18<<27 | 1<<26 | 1<<25 | (id&0x3FFFF)<<7 | rtr<<6 | dlc
		headerBits = extHeaderBits
	} else {
		header = uint64(f.ID&can.MaxID)<<7 | rtr<<6 | dlc
		headerBits = stdHeaderBits
	}
	data := f.Data[:n]
	crc := crc15(header, data)

	stuffed := headerBits + 8*uint(n) + crcBits
	var s stuffer
	s.start(stuffed)
	s.push(header, headerBits)
	for _, b := range data {
		s.push(uint64(b), 8)
	}
	s.push(uint64(crc), crcBits)
	return uint32(stuffed) + s.stuffBits + tailBits
}
