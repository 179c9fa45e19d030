// Package soak runs cand for a long time at full load with random faults and
// checks that no frame disappears without a counter (`cand soak`, `make soak`).
//
// The whole daemon runs in-process on the virtual Pi (internal/inproc), one end of
// a SOCK_SEQPACKET socketpair standing in for its CAN socket. On the bus, a load peer keeps it busy
// 100 % of the time with sequence-numbered frames (RX); a writer sends
// sequence-numbered frames into cand's socket at a fixed rate (TX), and a listener
// node on the bus checks them. Faults come at random intervals: bus-off, a bus
// stuck dominant, a chip reset, INT held low, a reader that stops reading. At the
// end the conservation report accounts for every frame per direction, and the
// process's memory, goroutines and file descriptors are compared with the start.
//
// Files: soak.go (Run: the daemon, the run), traffic.go (the writer, the reader,
// the listener node; their counters checked with internal/seqcheck), faults.go
// (the fault injector), report.go (the accounting and its verdict), resources.go
// (RSS, goroutines, fds).
package soak
