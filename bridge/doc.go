// Package bridge is the owner thread: the one goroutine, locked to one OS thread,
// that touches an SPI bus and moves frames between its MCP2515s and their
// SocketCAN sockets. Read it top to bottom to follow a frame:
//
// RX (owner.go → port.go → rx.go):
//  1. The MCP2515 pulls INT low; the kernel timestamps the edge (GPIO character
//     device, or the simulator's stand-in) and the owner's epoll_wait returns.
//  2. The owner reads the edge events (one read), notes the newest timestamp, and
//     calls the controller's HandleInterrupt.
//  3. HandleInterrupt does READ STATUS, then READ RX BUFFER for each full buffer in
//     bus order; each frame goes to Port.Received, which encodes it and writes it
//     to the socket at once, then records INT edge → socket write.
//  4. INT is re-checked through the GPIO level register (no syscall): the GPIO
//     character device only reports edges, so level semantics are emulated and no
//     interrupt is lost. With int_poll_window the owner keeps watching the level
//     for a bounded time before it sleeps in epoll_wait again.
//
// TX (tx.go): the socket is in the epoll set edge-triggered. A frame is read from
// it only when a TX buffer is free (mcp2515.Controller.TxFree), so the socket's
// receive queue is the back-pressure and nothing is dropped; LOAD TX BUFFER + RTS
// follow at once; the TX-done interrupt frees the buffer and pumps the next frame.
//
// Nothing between the INT edge and the socket write locks, allocates, hands work to
// another goroutine, or makes a syscall other than epoll_wait, the event read and
// the socket write (see the AllocsPerRun tests and benchmarks).
package bridge
