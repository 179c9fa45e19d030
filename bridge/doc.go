// Package bridge is the owner thread: the one goroutine, locked to one OS thread,
// that touches an SPI bus and moves frames between its MCP2515s and their
// SocketCAN sockets. Reading the files in this order follows a frame:
//
// port.go: a Port is one controller with its INT line, its poll window and its
// socket, built from one PortConfig; owner.go: Owner.Run locks the thread and puts
// every port's INT event fd and socket in one epoll set.
//
// RX, INT edge → socket write: the chip first, the socket after.
//  1. loop.go: the MCP2515 pulls INT low; the kernel timestamps the edge (GPIO
//     character device, or the simulator's stand-in) and epoll_wait returns.
//  2. rx.go: with INT asserted, the port drains the chip before anything else:
//     the controller's HandleInterrupt reads the status, then each full RX
//     buffer in bus order (READ RX BUFFER), and re-checks INT through the GPIO
//     level register, until INT is high: each a transfer through spi.go (its
//     timing recorded; probe.go's optional analyzer pins mark the stages). Each
//     frame goes to Port.Received, which puts it into the port's ring (ring.go:
//     preallocated, lock-free, 10 ms of the densest bus). From INT seen asserted
//     until INT is high again the owner makes no system call, takes no lock,
//     allocates nothing and wakes nobody: error frames wait in the ring too, and
//     a TX buffer freed while RX buffers are full is loaded after the drain.
//  3. rx.go: only then are the INT line's edge events read (one read), and each
//     frame is paired with the newest edge stamped before its status read.
//  4. deliver.go: the ring goes to the socket, in bus order. On a one-core board
//     (or with realtime.delivery: owner) the owner writes the drain's frames,
//     then more while INT stays high. Otherwise delivery.go's delivery thread, on
//     another core, writes them: it spins for a while after its last frame, then
//     parks, and the owner wakes a parked thread once per drain (under load it
//     does not park, so nothing is woken per frame); an isolated frame, the
//     first after the thread parked, the owner writes itself (isolated.go). A
//     full ring loses frames, counted and reported as an RX overflow.
//  5. loop.go: each turn re-checks INT through the GPIO level register (no
//     syscall): the GPIO character device only reports edges, so level semantics
//     are emulated and no interrupt is lost. With int_poll_window the loop keeps
//     watching the level after an interrupt instead of sleeping in epoll_wait.
//
// TX, socket read → TX done:
//  6. loop.go: the socket is in the epoll set edge-triggered; EPOLLIN marks it
//     readable and the port's turn pumps it.
//  7. tx.go: a frame is read from the socket only when a TX buffer is free
//     (mcp2515.Controller.TxFree), so the socket's receive queue is the
//     back-pressure and nothing is dropped; LOAD TX BUFFER + RTS follow at once.
//     The TX-done interrupt (rx.go's handler) reaches Port.Transmitted, which
//     frees the buffer; if that status pass found both RX buffers empty,
//     Port.TXFreed loads the next frame at once (refillInInterrupt), before the
//     interrupt's further passes; otherwise the turn after the drain does.
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
//  8. errorframe.go: the chip's error events are counted and, if enabled, sent
//     as SocketCAN error frames (through the ring, in bus order).
//  9. recovery.go: bus-off holds the controller off the bus until its restart; a
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
// Nothing between the INT edge and the socket write locks or allocates, and
// nothing between INT seen asserted and the chip empty makes a system call
// (deliver_test.go's TestDrainBeforeAnySystemCall watches it through the SPI
// transport and syscall.go's meter; the AllocsPerRun tests in port_test.go and
// delivery_test.go). Each frame-path system call is bracketed by the owner's
// kernelop.Meter, through which the virtual Pi charges it at the board's kernel
// cost.
package bridge
