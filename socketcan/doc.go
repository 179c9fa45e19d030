// Package socketcan is cand's side of Linux SocketCAN: it creates and checks
// the vcan/vxcan interface cand bridges to (rtnetlink, with x/sys/unix only)
// and follows its link state (up, down, deleted), opens the one raw CAN socket
// that carries frames both ways, moves 16-byte struct can_frame records in and
// out of any file descriptor without allocating, and encodes data, remote and
// error frames in the kernel's format (linux/can.h, linux/can/error.h).
//
// Files, one concept each:
//
//	frame.go           struct can_frame layout, Encode/Decode of can.Frame
//	errorframe.go      linux/can/error.h constants and the ErrorFrame builder
//	io_linux.go        ReadFrame/WriteFrame: recvmsg/write on any frame fd
//	socket_linux.go    Open: the raw CAN socket and its options
//	netlink.go         rtnetlink message encoding and reply parsing (pure)
//	link.go            Ensure/TakeDown/DeleteLink/SetLinkUp/LinkState/RenameLink/SetCANBitrate
//	netns.go           NetNS: where a vxcan peer is created
//	link_linux.go      the NETLINK_ROUTE socket the link functions talk over
//	linkevent.go       link messages (RTM_NEWLINK/RTM_DELLINK) as LinkEvents (pure)
//	linkwatch_linux.go WatchLinks: the RTNLGRP_LINK subscription and its dumps
//	errors.go          errors that name the cause and the fix
//	slcan/             the SLCAN protocol and the N_SLCAN pseudo-terminal (interface kind slcan)
//
// Nothing here knows about the MCP2515 or the SPI bus.
package socketcan
