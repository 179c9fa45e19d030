package bridge

import (
	"sync/atomic"

	"cand/socketcan"
)

// RingFrames is the default length of a port's RX ring: received frames wait
// there between the chip's drain and their socket write. It holds 10 ms of the
// densest traffic a bus carries, back-to-back DLC 0 standard frames at 1 Mbit/s
// (47 bit times each with the 3-bit intermission and no stuff bit: 213 frames;
// TestRingHoldsABurst), rounded up to a power of two.
const RingFrames = 256

// rxEntry is one record waiting for the socket: a received frame, or an error
// frame, already in the socket's 16-byte layout.
type rxEntry struct {
	rec    [socketcan.FrameSize]byte
	data   uint8 // data bytes of a received frame (cand_rx_bytes_total)
	isErr  bool  // an error frame (cand_error_frames_total, not a received frame)
	readNs int64 // its chip read: the start of the status pass that found it
	pushNs int64 // when it entered the ring
	edgeNs int64 // its INT edge's kernel timestamp (0: not paired)
}

// rxRing is a preallocated single-producer, single-consumer queue of rxEntry.
// The owner thread produces; the consumer is the owner itself or a delivery
// thread. Entries become visible to the consumer only when published, so the
// producer may still amend them (an edge paired after the drain). No lock: the
// indices are atomics, each written by one side.
type rxRing struct {
	buf  []rxEntry
	mask uint64
	head atomic.Uint64 // next entry to consume (consumer)
	tail atomic.Uint64 // entries published (producer)
	next uint64        // entries written, published or not (producer)
	high uint64        // the most entries ever waiting (producer)
}

// newRing returns a ring of n entries, n a power of two.
func newRing(n int) *rxRing {
	if n <= 0 || n&(n-1) != 0 {
		panic("bridge: ring length must be a power of two")
	}
	return &rxRing{buf: make([]rxEntry, n), mask: uint64(n - 1)}
}

// slot returns the entry to write next, or nil if the ring is full (producer).
func (r *rxRing) slot() *rxEntry {
	if r.full() {
		return nil
	}
	return &r.buf[r.next&r.mask]
}

// full reports whether the ring has no room (producer).
func (r *rxRing) full() bool { return r.next-r.head.Load() >= uint64(len(r.buf)) }

// commit counts the entry slot returned as written (producer).
func (r *rxRing) commit() {
	r.next++
	if n := r.next - r.head.Load(); n > r.high {
		r.high = n
	}
}

// written returns the indices of the entries written but not yet published,
// [from, to), for at (producer).
func (r *rxRing) written() (from, to uint64) { return r.tail.Load(), r.next }

// at is the entry of index i.
func (r *rxRing) at(i uint64) *rxEntry { return &r.buf[i&r.mask] }

// publish makes every written entry visible to the consumer (producer).
func (r *rxRing) publish() { r.tail.Store(r.next) }

// peek returns the oldest published entry, or nil (consumer).
func (r *rxRing) peek() *rxEntry {
	h := r.head.Load()
	if h == r.tail.Load() {
		return nil
	}
	return &r.buf[h&r.mask]
}

// pop releases the entry peek returned (consumer).
func (r *rxRing) pop() { r.head.Add(1) }

// waiting is how many published entries the consumer has not taken.
func (r *rxRing) waiting() uint64 { return r.tail.Load() - r.head.Load() }
