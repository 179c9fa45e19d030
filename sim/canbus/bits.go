package canbus

import "go.einride.tech/can"

// Wire layout of a classical CAN data/remote frame (ISO 11898-1):
//
//	SOF(1) | arbitration | control | data(8·n) | CRC(15) | CRC delim(1) | ACK slot(1) |
//	ACK delim(1) | EOF(7) | intermission(3)
//
// Standard arbitration+control: ID[10:0], RTR, IDE=0, r0, DLC[3:0].
// Extended: ID[28:18], SRR=1, IDE=1, ID[17:0], RTR, r1, r0, DLC[3:0].
// Bit stuffing (a complement bit after five equal bits, stuff bits counting in the
// next run) covers SOF..CRC; the fixed-form tail after the CRC is never stuffed.
const (
	tailBits   = 1 + 1 + 1 + 7 + 3 // CRC delimiter, ACK slot, ACK delimiter, EOF, intermission
	ackSlotEnd = 2                 // bits after the stuffed SOF..CRC until the end of the ACK slot
	eofEnd     = 10                // bits after the stuffed SOF..CRC until the end of EOF
	errorBits  = 6 + 8             // error flag + error delimiter
	ifsBits    = 3                 // intermission
	crcPoly    = 0x4599            // CRC-15-CAN: x^15+x^14+x^10+x^8+x^7+x^4+x^3+1
	maxRawBits = 1 + 32 + 6 + 64 + 15
)

// rawBits is an unstuffed SOF..CRC bit sequence, one bit per byte (0 dominant).
type rawBits struct {
	b [maxRawBits]byte
	n int
}

func (r *rawBits) put(v uint64, width int) {
	for i := width - 1; i >= 0; i-- {
		r.b[r.n] = byte(v>>uint(i)) & 1
		r.n++
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// build fills r with SOF..data of f, then the CRC-15 over those bits.
func (r *rawBits) build(f can.Frame) {
	r.n = 0
	r.put(0, 1) // SOF
	n := int(f.Length)
	if n > 8 {
		n = 8
	}
	if f.IsExtended {
		r.put(uint64(f.ID>>18)&0x7FF, 11)
		r.put(1, 1) // SRR
		r.put(1, 1) // IDE
		r.put(uint64(f.ID)&0x3FFFF, 18)
		r.put(b2u(f.IsRemote), 1)
		r.put(0, 2) // r1, r0
	} else {
		r.put(uint64(f.ID)&0x7FF, 11)
		r.put(b2u(f.IsRemote), 1)
		r.put(0, 2) // IDE, r0
	}
	r.put(uint64(n), 4)
	if !f.IsRemote {
		for i := 0; i < n; i++ {
			r.put(uint64(f.Data[i]), 8)
		}
	}
	r.put(uint64(crc15(r.b[:r.n])), 15)
}

// crc15 is the CRC-15-CAN of a bit sequence (one bit per byte), register initially 0.
func crc15(bits []byte) uint16 {
	var crc uint16
	for _, b := range bits {
		next := uint16(b) ^ (crc >> 14 & 1)
		crc = crc << 1 & 0x7FFF
		if next != 0 {
			crc ^= crcPoly
		}
	}
	return crc
}

// CRC15 returns the ISO 11898-1 CRC of f's SOF..data bits.
func CRC15(f can.Frame) uint16 {
	var r rawBits
	r.build(f)
	var crc uint16
	for i := r.n - 15; i < r.n; i++ {
		crc = crc<<1 | uint16(r.b[i])
	}
	return crc
}

// stuffedLen returns the length of SOF..CRC after bit stuffing.
func stuffedLen(f can.Frame) int {
	var r rawBits
	r.build(f)
	n := r.n
	run, last := 0, byte(2)
	for i := 0; i < r.n; i++ {
		if r.b[i] == last {
			run++
		} else {
			last, run = r.b[i], 1
		}
		if run == 5 {
			n++
			last, run = 1-last, 1 // the stuff bit starts the next run
		}
	}
	return n
}

// FrameBits is f's length on the wire in bits: stuffed SOF..CRC plus CRC delimiter,
// ACK slot and delimiter, 7-bit EOF and 3-bit intermission.
func FrameBits(f can.Frame) int { return stuffedLen(f) + tailBits }

// arbKey packs f's arbitration field (ID bits, SRR, IDE, RTR) left-aligned into 32
// bits in wire order, so that a lower key is the one that wins bitwise arbitration
// (0 is dominant). Standard: ID[10:0], RTR, IDE=0, zero padding; extended: ID[28:18],
// SRR=1, IDE=1, ID[17:0], RTR.
func arbKey(f can.Frame) uint32 {
	if f.IsExtended {
		return (f.ID>>18&0x7FF)<<21 | 1<<20 | 1<<19 | (f.ID&0x3FFFF)<<1 | uint32(b2u(f.IsRemote))
	}
	return (f.ID&0x7FF)<<21 | uint32(b2u(f.IsRemote))<<20
}
