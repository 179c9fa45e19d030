package canbus

import (
	"encoding/binary"

	"go.einride.tech/can"
)

// Payload is the data a periodic or load peer puts in its n-th frame (n counts from
// 0, per peer, over all its IDs) for a data length of dlc bytes:
//
//	dlc 8:     bytes 0..7 = n as a big-endian uint64
//	dlc 4..7:  bytes 0..3 = uint32(n) big-endian, then byte i (i ≥ 4) = i
//	dlc 1..3:  the dlc low-order bytes of n, big-endian (dlc 2: uint16(n))
//	dlc 0:     no data
//
// Bytes at and beyond dlc are zero. Counter reverses it.
func Payload(n uint64, dlc uint8) can.Data {
	var d can.Data
	switch {
	case dlc >= 8:
		binary.BigEndian.PutUint64(d[:], n)
	case dlc >= 4:
		binary.BigEndian.PutUint32(d[:], uint32(n))
		for i := uint8(4); i < dlc; i++ {
			d[i] = i
		}
	default:
		for i := uint8(0); i < dlc; i++ {
			d[i] = byte(n >> (8 * (dlc - 1 - i)))
		}
	}
	return d
}

// Counter decodes the counter of a peer frame (the low 8·min(dlc,4) bits for dlc < 8,
// all 64 for dlc 8). ok is false for remote frames, dlc 0, or a dlc 4..7 frame whose
// pattern bytes are wrong.
func Counter(f can.Frame) (n uint64, ok bool) {
	if f.IsRemote || f.Length == 0 {
		return 0, false
	}
	switch {
	case f.Length >= 8:
		return binary.BigEndian.Uint64(f.Data[:]), true
	case f.Length >= 4:
		for i := uint8(4); i < f.Length; i++ {
			if f.Data[i] != i {
				return 0, false
			}
		}
		return uint64(binary.BigEndian.Uint32(f.Data[:])), true
	default:
		for i := uint8(0); i < f.Length; i++ {
			n = n<<8 | uint64(f.Data[i])
		}
		return n, true
	}
}
