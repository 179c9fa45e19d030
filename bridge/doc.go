// Package bridge is the owner thread: the one goroutine, locked to one OS thread,
// that touches an SPI bus and moves frames between its MCP2515s and their
// SocketCAN sockets. Reading the files in this order follows a frame:
//
// port.go: a Port is one controller with its INT line, its poll window and its
// socket, built from one PortConfig; owner.go: Owner.Run locks the thread and puts
// every port's INT event fd and socket in one epoll set.
//
// RX, INT edge → socket write:
//  1. loop.go: the MCP2515 pulls INT low; the kernel timestamps the edge (GPIO
//     character device, or the simulator's stand-in) and epoll_wait returns.
//  2. rx.go: the port reads the edge events (one read), notes the newest
//     timestamp, and calls the controller's HandleInterrupt: READ STATUS, then
//     READ RX BUFFER for each full buffer in bus order, each a transfer through
//     spi.go (its timing recorded; probe.go's optional analyzer pins mark the
//     stages). Each frame goes to Port.Received, which encodes it and writes it to
//     the socket at once, then records INT edge → socket write.
//  3. loop.go: each turn re-checks INT through the GPIO level register (no
//     syscall): the GPIO character device only reports edges, so level semantics
//     are emulated and no interrupt is lost. With int_poll_window the loop keeps
//     watching the level after an interrupt instead of sleeping in epoll_wait.
//
// TX, socket read → TX done:
//  4. loop.go: the socket is in the epoll set edge-triggered; EPOLLIN marks it
//     readable and the port's turn pumps it.
//  5. tx.go: a frame is read from the socket only when a TX buffer is free
//     (mcp2515.Controller.TxFree), so the socket's receive queue is the
//     back-pressure and nothing is dropped; LOAD TX BUFFER + RTS follow at once.
//     The TX-done interrupt (rx.go's handler) reaches Port.Transmitted, which
//     frees the buffer; after that status pass, Port.TXFreed loads the next
//     frame at once, before the interrupt's further passes (under RX load INT
//     stays low from pass to pass).
//
// When the interface, its socket or the INT line fails, or cand stops
// (docs/faults.md has every fault, and what reports it):
//   - link.go: the link watch's state (Owner.SetLink): the interface down or gone
//     takes the controller off the bus; up again, it is programmed again; a
//     recreated interface's socket takes the old one's place (Owner.ReplaceSocket).
//   - sockerr.go: each socket error by its cause; one no retry mends ends that
//     port's bridging, and cand's only once no port is left.
//   - storm.go: with INT stuck low and nothing flagged, the chip is polled
//     (stormPoll) instead of spun on.
//   - drain.go: on the way out the TX buffers finish, and what waits in the socket
//     queue is counted.
//
// Between two turns (apply.go), Owner.Apply runs what another goroutine posts on
// the owner thread: a configuration reload's settings and chip configuration
// (settings.go: Port.SetSettings, Port.Reprogram), so nothing the owner owns is
// shared under a lock.
//
// When the bus or the chip fails:
//  6. errorframe.go: the chip's error events are counted and, if enabled, sent
//     as SocketCAN error frames.
//  7. recovery.go: bus-off holds the controller off the bus until its restart; a
//     chip that reset itself or stopped answering is re-initialised, and retried
//     with back-off while it does not answer.
//
// The loop's bound (loop.go): every loop turn serves every duty — heartbeat, stop
// and control requests, the epoll set, and per port the TX socket, TX timeout,
// bus-off restart and chip health. The poll window spans turns: it returns to the
// loop after each interrupt it handles and at most every PollsPerTurn polls, and
// closes after WindowRearms re-arms (by an interrupt, or after the thread did not
// run for a whole window), whereupon the owner sleeps in epoll_wait until its next
// event. So whatever the RX load and window, no duty waits for more than
// PollsPerTurn INT level reads and three interrupts per port, a TX frame written
// meanwhile is read at the next turn, and a window never holds the CPU for more
// than WindowRearms frames. Owner.LoopStats (loopstats.go) counts it (loop_test.go, and the
// daemon's TestTXUnderFullRXLoad under full RX load).
//
// Nothing between the INT edge and the socket write locks, allocates, hands work to
// another goroutine, or makes a syscall other than epoll_wait, the event read and
// the socket write (see the AllocsPerRun tests in port_test.go).
package bridge
