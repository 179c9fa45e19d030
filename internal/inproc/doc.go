// Package inproc runs cand's daemon inside the calling process, for the benchmark,
// the soak and the end-to-end tests: one end of a SOCK_SEQPACKET socketpair stands
// in for each controller's CAN socket (it carries the same 16-byte frames as a raw
// CAN socket), the other end is the caller's. What the caller reads there is what
// candump would show; what it writes, what cansend would send.
//
// The package does not import the daemon, so that the daemon's own tests can use
// it: the caller's run function calls daemon.Run with what Start hands it (the
// daemon's socket ends, a /metrics listener, the ready callback), and with the
// virtual Pi it chose.
package inproc
