// Package gpio is the Linux GPIO character device, uAPI v2 (linux/gpio.h): line
// requests with bias, edge detection with kernel timestamps, and the decoding of edge
// events. The simulator's interrupt line writes the same 48-byte events into a pipe,
// so the driver reads real and simulated edges with one code path: ReadEvents on the
// fd of either, and a SeqTracker to notice events the kernel dropped.
//
// OpenChip, Chip.RequestLine and Line are the character device; uapi.go mirrors the
// header's structs and ioctl numbers, checked against /usr/include/linux/gpio.h by the
// tests on amd64, arm and arm64.
package gpio

import "encoding/binary"

// EventSize is sizeof(struct gpio_v2_line_event).
const EventSize = 48

// Event ids (enum gpio_v2_line_event_id).
const (
	EventRisingEdge  = 1
	EventFallingEdge = 2
)

// Event is struct gpio_v2_line_event without its padding.
type Event struct {
	TimestampNs uint64 // @0: CLOCK_MONOTONIC unless the request asked for REALTIME
	ID          uint32 // @8: EventRisingEdge or EventFallingEdge
	Offset      uint32 // @12: line offset on the chip
	Seqno       uint32 // @16: sequence number across the request's lines
	LineSeqno   uint32 // @20: sequence number on this line
}

// Decode fills e from the first EventSize bytes of b (native little-endian layout on
// every architecture cand supports). It does not allocate.
func (e *Event) Decode(b []byte) {
	_ = b[EventSize-1]
	e.TimestampNs = binary.LittleEndian.Uint64(b[0:])
	e.ID = binary.LittleEndian.Uint32(b[8:])
	e.Offset = binary.LittleEndian.Uint32(b[12:])
	e.Seqno = binary.LittleEndian.Uint32(b[16:])
	e.LineSeqno = binary.LittleEndian.Uint32(b[20:])
}

// Encode writes e into b[0:EventSize] in the kernel's layout, padding zeroed.
// The simulator uses it to play the kernel's part.
func (e *Event) Encode(b []byte) {
	_ = b[EventSize-1]
	binary.LittleEndian.PutUint64(b[0:], e.TimestampNs)
	binary.LittleEndian.PutUint32(b[8:], e.ID)
	binary.LittleEndian.PutUint32(b[12:], e.Offset)
	binary.LittleEndian.PutUint32(b[16:], e.Seqno)
	binary.LittleEndian.PutUint32(b[20:], e.LineSeqno)
	clear(b[24:EventSize])
}

// EventSource is a readable, epoll-able source of gpio_v2_line_event records for one
// line: a *Line, or the simulator's edge line. Drain it with ReadEvents(src.Fd(), …).
type EventSource interface {
	Fd() int
	Offset() uint32
}
