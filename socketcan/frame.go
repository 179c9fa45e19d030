package socketcan

import (
	"encoding/binary"

	"go.einride.tech/can"
	"go.einride.tech/can/pkg/socketcan"
)

// Layout of struct can_frame (linux/can.h): a little-endian u32 can_id with
// the EFF/RTR/ERR flags in its top bits, the payload length, a pad byte, a
// reserved byte, len8_dlc, then data[8] at offset 8. FrameSize is CAN_MTU.
const (
	FrameSize     = 16 // CAN_MTU: sizeof(struct can_frame)
	MaxDataLen    = 8  // CAN_MAX_DLEN
	offsetID      = 0  // can_id
	offsetLen     = 4  // len (formerly can_dlc)
	offsetPad     = 5  // __pad
	offsetRes0    = 6  // __res0
	offsetLen8DLC = 7  // len8_dlc: raw DLC 9..15 of an 8-byte classic frame
	offsetData    = 8  // data[8], 8-byte aligned
	lengthOfCANID = 4
	maxClassicDLC = 15 // a classic CAN DLC field is 4 bits
	canSFFMask    = 0x000007ff
	canEFFMask    = 0x1fffffff
	canEFFFlag    = 0x80000000
	canRTRFlag    = 0x40000000
)

// The data field must end exactly at the end of the record.
var _ [FrameSize]struct{} = [offsetData + MaxDataLen]struct{}{}

// FrameKind says what a 16-byte record holds. The invalid kinds are reasons
// a record was rejected; callers count them by kind.
type FrameKind uint8

const (
	FrameData   FrameKind = iota // data frame: ID, Length, Data valid
	FrameRemote                  // remote frame: ID and requested Length valid
	FrameError                   // CAN_ERR_FLAG set: f.ID holds the error classes, f.Data the payload
	FrameBadLen                  // len > 8: not a classic CAN frame (CAN FD, or garbage)
	FrameBadID                   // standard frame with ID bits above 0x7ff set
	numFrameKinds
)

// NumFrameKinds is the number of FrameKind values, for per-kind counter arrays.
const NumFrameKinds = int(numFrameKinds)

var frameKindNames = [numFrameKinds]string{
	FrameData:   "data",
	FrameRemote: "remote",
	FrameError:  "error",
	FrameBadLen: "bad_len",
	FrameBadID:  "bad_id",
}

// String returns a short lower-case name usable as a metric label value.
func (k FrameKind) String() string {
	if k < numFrameKinds {
		return frameKindNames[k]
	}
	return "unknown"
}

// Valid reports whether the record is a data or remote frame that may be put
// on the bus.
func (k FrameKind) Valid() bool { return k == FrameData || k == FrameRemote }

// Encode writes f into b as a struct can_frame. The ID is masked to 11 or 29
// bits. A Length above 8 is written as len 8; if it is a classic DLC of 9..15
// it also goes into len8_dlc, as the kernel does with CAN_CTRLMODE_CC_LEN8_DLC.
// All 8 data bytes are copied as they are. Encode does not allocate.
func Encode(b *[FrameSize]byte, f can.Frame) {
	if f.IsExtended {
		f.ID &= canEFFMask
	} else {
		f.ID &= canSFFMask
	}
	len8 := uint8(0)
	if f.Length > MaxDataLen {
		if f.Length <= maxClassicDLC {
			len8 = f.Length
		}
		f.Length = MaxDataLen
	}
	var sf socketcan.Frame // einride's struct can_frame codec
	sf.EncodeFrame(f)
	sf.MarshalBinary(b[:])
	// einride leaves the three bytes after len untouched: __pad, __res0, len8_dlc.
	b[offsetPad] = 0
	b[offsetRes0] = 0
	b[offsetLen8DLC] = len8
}

// Decode reads a struct can_frame. For FrameData and FrameRemote, f is the
// frame. For FrameError, f.ID holds the error class bits (can_id without
// CAN_ERR_FLAG), f.Length the len byte and f.Data the error payload; use
// DecodeErrorFrame for named fields. For the invalid kinds f holds what was
// read (ID masked to 29 bits, Length as received) so the caller can log it;
// it must not be sent. Decode does not allocate and accepts any bytes.
func Decode(b *[FrameSize]byte) (f can.Frame, kind FrameKind) {
	var sf socketcan.Frame // einride's struct can_frame codec
	sf.UnmarshalBinary(b[:])
	if sf.IsError() {
		id := binary.LittleEndian.Uint32(b[offsetID : offsetID+lengthOfCANID])
		f.ID = id & CAN_ERR_MASK
		f.Length = b[offsetLen]
		copy(f.Data[:], b[offsetData:])
		return f, FrameError
	}
	f = sf.DecodeFrame()
	if !f.IsExtended {
		// einride masks a standard ID to 11 bits; a record with higher bits set
		// is not a valid standard frame.
		f.ID = binary.LittleEndian.Uint32(b[offsetID:offsetID+lengthOfCANID]) & canEFFMask
	}
	switch {
	case f.Length > MaxDataLen:
		return f, FrameBadLen
	case !f.IsExtended && f.ID > canSFFMask:
		return f, FrameBadID
	case f.IsRemote:
		return f, FrameRemote
	}
	return f, FrameData
}
