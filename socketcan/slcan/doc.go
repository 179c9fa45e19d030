// Package slcan is the SLCAN ASCII protocol as the Linux kernel's slcan line
// discipline speaks it (drivers/net/can/slcan/slcan-core.c, Linux 6.0 and
// later): cand plays the serial adapter on the master side of a pseudo-terminal
// whose slave end carries the N_SLCAN discipline, so the kernel gives
// applications a real CAN netdev (bitrate through `ip link`, bus state in
// `ip -details link show`).
//
// Lines cand writes (the kernel parses them, slc_bump*), each ended by CR:
//
//	tIIILDD..     standard data frame: 3 hex ID digits, DLC digit, 2 hex digits a byte
//	TIIIIIIIILDD.. extended data frame: 8 hex ID digits
//	rIIIL, RIIIIIIIIL remote frames (DLC, no data)
//	sXRRRTTT      bus state X (a active, w warning, p passive, b bus-off), RX then TX
//	              error counter, 3 decimal digits each
//	eNxx..        N error letters: a ACK, b bit0, B bit1, c CRC, f form, o RX overrun,
//	              O TX overrun, s stuff
//
// Lines the kernel writes (slc_encaps, slc_open, slc_close), each ended by CR:
// frames in the same t/T/r/R form with upper-case hex, `Sn` (n = 0..8, the index
// into its fixed bitrate list), `O` (open: on the bus), `C` (close: off the bus)
// and `F` (clear the error state, when the ethtool flag err-rst-on-open is set).
//
// Files:
//
//	codec.go   the bitrate list, Parse of one line, the Append encoders
//	lines.go   Lines: splits a byte stream at CR/BEL with a bounded line length
//	record.go  AppendRecord: a 16-byte struct can_frame (frame or error frame) as lines
package slcan
