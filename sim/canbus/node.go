package canbus

import "go.einride.tech/can"

// ErrorKind is the error a node detects (ISO 11898-1 §10.9).
type ErrorKind uint8

const (
	BitError   ErrorKind = iota + 1 // transmitted bit differs from the bus
	StuffError                      // six equal bits where stuffing applies
	FormError                       // fixed-form bit field has an illegal bit
	AckError                        // transmitter saw no dominant ACK slot
	// DominantBits: eight more dominant bits after an error flag (stuck bus). ISO
	// rule: every transmitter adds 8 to TEC, every receiver 8 to REC.
	DominantBits
)

var errorNames = [...]string{"none", "bit", "stuff", "form", "ack", "dominant"}

func (e ErrorKind) String() string {
	if int(e) < len(errorNames) {
		return errorNames[e]
	}
	return "unknown"
}

// Node is a CAN controller on the bus. All methods run with the world lock held and
// must not block. Times are the bus's clock (Clock: sim/clock's virtual ns; host
// CLOCK_MONOTONIC for a bus made with New).
type Node interface {
	// Pending is asked at each start of frame: the frame the node would transmit now.
	// It has no side effects. A node that answers ok takes part in arbitration and
	// then gets TxStart (it won) or TxLost (it lost).
	Pending(at int64) (f can.Frame, ok bool)
	// TxStart: the frame from Pending won arbitration and is on the wire. One of
	// TxDone or TxError follows.
	TxStart(at int64)
	// TxLost: the frame from Pending lost arbitration; it may compete at the next SOF.
	TxLost(at int64)
	// TxDone: the frame was acknowledged and completed (end of EOF).
	TxDone(at int64)
	// TxError: the node's transmission failed; an error frame follows.
	TxError(e ErrorKind, at int64)
	// Receive: a valid frame the node did not send (end of EOF).
	Receive(f can.Frame, at int64)
	// RxError: the node, as a receiver, detected an error (or saw an error frame).
	RxError(e ErrorKind, at int64)
	// Acks reports whether the node drives the ACK slot (not listen-only, not
	// bus-off, configured for this bitrate).
	Acks(at int64) bool
}

// Garbler is implemented by nodes that can be out of step with the bus (e.g. an
// MCP2515 whose CNF registers give another bitrate): a frame such a node wins is
// destroyed by a bit error.
type Garbler interface {
	Garbled(at int64) bool
}
