// Package socketcand is cand's socketcand server: remote tools (python-can's
// "socketcand" interface, and others speaking the protocol of
// https://github.com/linux-can/socketcand, doc/protocol.md) reach the
// controllers' buses over TCP.
//
// Each bus is a file descriptor carrying 16-byte struct can_frame records: a
// CAN_RAW socket of its own on the controller's SocketCAN interface (it sees
// what cand writes there, like candump, and what it sends reaches cand like
// any application's frames), or, for a controller without an interface, the
// other end of the SOCK_SEQPACKET socketpair cand's owner thread uses as its
// CAN socket. Either way the owner thread's frame path is untouched: it only
// sees a socket. One goroutine per bus reads the records and offers each frame
// to the clients in raw mode; a client too slow to take them loses frames
// (counted and logged), never holding up the bus or the other clients.
//
// Files, one duty each:
//
//	server.go  Start, Close: the TCP listener, the allow-list, the bound on clients
//	client.go  one client's state machine: NO_BUS, BCM, RAW and CONTROL modes
//	outbox.go  one client's writer: replies, frames, statistics, in order
//	bus.go     one bus: its records to the raw-mode clients, their frames to it
//	beacon.go  the UDP discovery beacon
//
// The codec (parsing and formatting "< ... >") is package protocol.
package socketcand
