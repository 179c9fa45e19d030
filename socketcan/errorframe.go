package socketcan

import "encoding/binary"

// Error frames as the kernel's CAN drivers emit them (linux/can/error.h).
// The names are the header's, so a reader can grep both. An error frame is a
// struct can_frame whose can_id is CAN_ERR_FLAG | classes and whose len is
// CAN_ERR_DLC; the classes say which data bytes carry detail.
const (
	CAN_ERR_FLAG = 0x20000000 // linux/can.h: can_id marks an error frame
	CAN_ERR_MASK = 0x1fffffff // linux/can.h: class bits of an error can_id
	CAN_ERR_DLC  = 8          // len of every error frame
)

// Error classes, in can_id.
const (
	CAN_ERR_TX_TIMEOUT = 0x00000001 // TX timeout (by netdevice driver)
	CAN_ERR_LOSTARB    = 0x00000002 // lost arbitration: data[0]
	CAN_ERR_CRTL       = 0x00000004 // controller problems: data[1]
	CAN_ERR_PROT       = 0x00000008 // protocol violations: data[2..3]
	CAN_ERR_TRX        = 0x00000010 // transceiver status: data[4]
	CAN_ERR_ACK        = 0x00000020 // received no ACK on transmission
	CAN_ERR_BUSOFF     = 0x00000040 // bus off
	CAN_ERR_BUSERROR   = 0x00000080 // bus error (may flood!)
	CAN_ERR_RESTARTED  = 0x00000100 // controller restarted
	CAN_ERR_CNT        = 0x00000200 // TX error counter data[6], RX error counter data[7] (Linux >= 6.0)
)

// data[0]: arbitration lost in bit n (bit number in bitstream).
const CAN_ERR_LOSTARB_UNSPEC = 0x00

// data[1]: error status of the CAN controller.
const (
	CAN_ERR_CRTL_UNSPEC      = 0x00
	CAN_ERR_CRTL_RX_OVERFLOW = 0x01 // RX buffer overflow
	CAN_ERR_CRTL_TX_OVERFLOW = 0x02 // TX buffer overflow
	CAN_ERR_CRTL_RX_WARNING  = 0x04 // reached warning level for RX errors
	CAN_ERR_CRTL_TX_WARNING  = 0x08 // reached warning level for TX errors
	CAN_ERR_CRTL_RX_PASSIVE  = 0x10 // reached error passive status RX
	CAN_ERR_CRTL_TX_PASSIVE  = 0x20 // reached error passive status TX (a counter > 127)
	CAN_ERR_CRTL_ACTIVE      = 0x40 // recovered to error active state
)

// data[2]: error in CAN protocol (type).
const (
	CAN_ERR_PROT_UNSPEC   = 0x00
	CAN_ERR_PROT_BIT      = 0x01 // single bit error
	CAN_ERR_PROT_FORM     = 0x02 // frame format error
	CAN_ERR_PROT_STUFF    = 0x04 // bit stuffing error
	CAN_ERR_PROT_BIT0     = 0x08 // unable to send dominant bit
	CAN_ERR_PROT_BIT1     = 0x10 // unable to send recessive bit
	CAN_ERR_PROT_OVERLOAD = 0x20 // bus overload
	CAN_ERR_PROT_ACTIVE   = 0x40 // active error announcement
	CAN_ERR_PROT_TX       = 0x80 // error occurred on transmission
)

// data[3]: error in CAN protocol (location).
const (
	CAN_ERR_PROT_LOC_UNSPEC  = 0x00
	CAN_ERR_PROT_LOC_SOF     = 0x03 // start of frame
	CAN_ERR_PROT_LOC_ID28_21 = 0x02 // ID bits 28-21 (SFF: 10-3)
	CAN_ERR_PROT_LOC_ID20_18 = 0x06 // ID bits 20-18 (SFF: 2-0)
	CAN_ERR_PROT_LOC_SRTR    = 0x04 // substitute RTR (SFF: RTR)
	CAN_ERR_PROT_LOC_IDE     = 0x05 // identifier extension
	CAN_ERR_PROT_LOC_ID17_13 = 0x07 // ID bits 17-13
	CAN_ERR_PROT_LOC_ID12_05 = 0x0F // ID bits 12-5
	CAN_ERR_PROT_LOC_ID04_00 = 0x0E // ID bits 4-0
	CAN_ERR_PROT_LOC_RTR     = 0x0C // RTR
	CAN_ERR_PROT_LOC_RES1    = 0x0D // reserved bit 1
	CAN_ERR_PROT_LOC_RES0    = 0x09 // reserved bit 0
	CAN_ERR_PROT_LOC_DLC     = 0x0B // data length code
	CAN_ERR_PROT_LOC_DATA    = 0x0A // data section
	CAN_ERR_PROT_LOC_CRC_SEQ = 0x08 // CRC sequence
	CAN_ERR_PROT_LOC_CRC_DEL = 0x18 // CRC delimiter
	CAN_ERR_PROT_LOC_ACK     = 0x19 // ACK slot
	CAN_ERR_PROT_LOC_ACK_DEL = 0x1B // ACK delimiter
	CAN_ERR_PROT_LOC_EOF     = 0x1A // end of frame
	CAN_ERR_PROT_LOC_INTERM  = 0x12 // intermission
)

// data[4]: error status of the CAN transceiver (CANH in the low nibble,
// CANL in the high nibble).
const (
	CAN_ERR_TRX_UNSPEC             = 0x00
	CAN_ERR_TRX_CANH_NO_WIRE       = 0x04
	CAN_ERR_TRX_CANH_SHORT_TO_BAT  = 0x05
	CAN_ERR_TRX_CANH_SHORT_TO_VCC  = 0x06
	CAN_ERR_TRX_CANH_SHORT_TO_GND  = 0x07
	CAN_ERR_TRX_CANL_NO_WIRE       = 0x40
	CAN_ERR_TRX_CANL_SHORT_TO_BAT  = 0x50
	CAN_ERR_TRX_CANL_SHORT_TO_VCC  = 0x60
	CAN_ERR_TRX_CANL_SHORT_TO_GND  = 0x70
	CAN_ERR_TRX_CANL_SHORT_TO_CANH = 0x80
)

// Error counter thresholds (ISO 11898-1), used to pick the CRTL bits.
const (
	CAN_ERROR_WARNING_THRESHOLD = 96
	CAN_ERROR_PASSIVE_THRESHOLD = 128
	CAN_BUS_OFF_THRESHOLD       = 256
)

// Indices into an error frame's data (the header documents them in comments).
const (
	errIndexLostArb  = 0 // CAN_ERR_LOSTARB: bit number
	errIndexCrtl     = 1 // CAN_ERR_CRTL: CAN_ERR_CRTL_* bits
	errIndexProtType = 2 // CAN_ERR_PROT: CAN_ERR_PROT_* bits
	errIndexProtLoc  = 3 // CAN_ERR_PROT: CAN_ERR_PROT_LOC_*
	errIndexTrx      = 4 // CAN_ERR_TRX: CAN_ERR_TRX_*
	errIndexTEC      = 6 // CAN_ERR_CNT: TX error counter
	errIndexREC      = 7 // CAN_ERR_CNT: RX error counter
)

// ErrorFrame builds an error frame. The zero value has no class; each method
// adds a class and fills its bytes, so one frame can report several things
// (e.g. a state change with its counters), as kernel drivers do:
//
//	var e ErrorFrame
//	e.Controller(CAN_ERR_CRTL_RX_WARNING)
//	e.Counters(tec, rec)
//	e.Encode(&buf)
type ErrorFrame struct {
	Class uint32            // CAN_ERR_* class bits, without CAN_ERR_FLAG
	Data  [CAN_ERR_DLC]byte // payload, indexed as in linux/can/error.h
}

// Add sets classes that carry no payload: CAN_ERR_TX_TIMEOUT, CAN_ERR_ACK,
// CAN_ERR_BUSOFF, CAN_ERR_BUSERROR, CAN_ERR_RESTARTED.
func (e *ErrorFrame) Add(class uint32) { e.Class |= class & CAN_ERR_MASK }

// LostArbitration sets CAN_ERR_LOSTARB with the bit number in data[0]
// (CAN_ERR_LOSTARB_UNSPEC if unknown).
func (e *ErrorFrame) LostArbitration(bit uint8) {
	e.Class |= CAN_ERR_LOSTARB
	e.Data[errIndexLostArb] = bit
}

// Controller sets CAN_ERR_CRTL and ORs CAN_ERR_CRTL_* bits into data[1].
func (e *ErrorFrame) Controller(bits uint8) {
	e.Class |= CAN_ERR_CRTL
	e.Data[errIndexCrtl] |= bits
}

// Protocol sets CAN_ERR_PROT, ORs CAN_ERR_PROT_* type bits into data[2] and
// stores the CAN_ERR_PROT_LOC_* location in data[3].
func (e *ErrorFrame) Protocol(typ, loc uint8) {
	e.Class |= CAN_ERR_PROT
	e.Data[errIndexProtType] |= typ
	e.Data[errIndexProtLoc] = loc
}

// Transceiver sets CAN_ERR_TRX with a CAN_ERR_TRX_* status in data[4].
func (e *ErrorFrame) Transceiver(status uint8) {
	e.Class |= CAN_ERR_TRX
	e.Data[errIndexTrx] = status
}

// Counters sets CAN_ERR_CNT with the transmit error counter in data[6] and
// the receive error counter in data[7].
func (e *ErrorFrame) Counters(tec, rec uint8) {
	e.Class |= CAN_ERR_CNT
	e.Data[errIndexTEC] = tec
	e.Data[errIndexREC] = rec
}

// TEC returns data[6], the transmit error counter (valid with CAN_ERR_CNT).
func (e *ErrorFrame) TEC() uint8 { return e.Data[errIndexTEC] }

// REC returns data[7], the receive error counter (valid with CAN_ERR_CNT).
func (e *ErrorFrame) REC() uint8 { return e.Data[errIndexREC] }

// Encode writes the frame as a struct can_frame: can_id = CAN_ERR_FLAG |
// Class, len = CAN_ERR_DLC, pad bytes zero. It does not allocate.
func (e *ErrorFrame) Encode(b *[FrameSize]byte) {
	binary.LittleEndian.PutUint32(b[offsetID:offsetID+lengthOfCANID], CAN_ERR_FLAG|e.Class&CAN_ERR_MASK)
	b[offsetLen] = CAN_ERR_DLC
	b[offsetPad] = 0
	b[offsetRes0] = 0
	b[offsetLen8DLC] = 0
	copy(b[offsetData:], e.Data[:])
}

// DecodeErrorFrame reads an error frame; ok is false if CAN_ERR_FLAG is not
// set in can_id (then e is zero).
func DecodeErrorFrame(b *[FrameSize]byte) (e ErrorFrame, ok bool) {
	id := binary.LittleEndian.Uint32(b[offsetID : offsetID+lengthOfCANID])
	if id&CAN_ERR_FLAG == 0 {
		return ErrorFrame{}, false
	}
	e.Class = id & CAN_ERR_MASK
	copy(e.Data[:], b[offsetData:])
	return e, true
}
