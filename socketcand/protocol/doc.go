// Package protocol is the socketcand protocol's codec: pure functions that split
// a byte stream into "< ... >" messages, parse the commands a client sends, and
// format (and parse back) the messages a server sends, as the protocol text
// (https://github.com/linux-can/socketcand, doc/protocol.md) and the reference
// server (its src/state_*.c) define them. It does no I/O beyond reading an
// io.Reader and keeps no state between calls.
//
// Files:
//
//	stream.go   Next and Reader: messages out of a byte stream, split anywhere
//	command.go  Command and ParseCommand: what a client asks; AppendSend
//	server.go   the server's messages: hi, ok, echo, frame, error, stat; ParseServer
//	beacon.go   the UDP discovery beacon (XML)
package protocol
