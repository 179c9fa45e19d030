// Package canwire counts how long a classical CAN frame occupies the bus: its bit
// times on the wire from the start of frame to the end of frame, plus the 3-bit
// intermission before the next frame may start, stuff bits included
// (ISO 11898-1). Divided by the bitrate over an interval, the sum is the bus load
// the frames make, as can-utils' canbusload computes it.
//
// Files:
//
//	bits.go   the frame's layout and Bits, the count
//	crc.go    the CRC-15 the frame carries (part of what is stuffed)
//	stuff.go  counting the stuff bits
//
// Bits runs on cand's frame path once per frame received or transmitted: it does
// not allocate or lock, and works a byte at a time through two small tables built
// when the package is initialised and only read afterwards.
package canwire
