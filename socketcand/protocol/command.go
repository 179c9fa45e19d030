package protocol

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.einride.tech/can"
)

// Verb is what a command asks for.
type Verb uint8

const (
	Unknown     Verb = iota // no command of the protocol
	Open                    // < open bus >: mode NO_BUS → BCM
	BusConfig               // < bus B ... > (bit timing) or < bus C ... > (control mode), in mode NO_BUS
	RawMode                 // < rawmode >
	BCMMode                 // < bcmmode >
	ControlMode             // < controlmode >
	ISOTPMode               // < isotpmode >
	Echo                    // < echo >
	Send                    // < send can_id can_dlc [data]* >
	Statistics              // < statistics ms >, mode CONTROL
	BCMJob                  // add, update, delete, filter, muxfilter, subscribe, unsubscribe: mode BCM
	ISOTPJob                // isotpconf, sendpdu: mode ISO-TP
)

// verbOf is the verb of a command word (the protocol text's words, in lower case).
func verbOf(word string) Verb {
	switch word {
	case "open":
		return Open
	case "rawmode":
		return RawMode
	case "bcmmode":
		return BCMMode
	case "controlmode":
		return ControlMode
	case "isotpmode":
		return ISOTPMode
	case "echo":
		return Echo
	case "send":
		return Send
	case "statistics":
		return Statistics
	case "add", "update", "delete", "filter", "muxfilter", "subscribe", "unsubscribe":
		return BCMJob
	case "isotpconf", "sendpdu":
		return ISOTPJob
	}
	return Unknown
}

// Command is one parsed client message.
type Command struct {
	Verb  Verb
	Word  string    // the command word as sent
	Bus   string    // Open, BusConfig: the bus name
	Frame can.Frame // Send: a data frame
	// IntervalMs is Statistics' interval in milliseconds; 0 turns statistics off.
	IntervalMs uint32
}

// MaxBusName is the longest bus name open takes (MAX_BUSNAME in the reference
// server's socketcand.h).
const MaxBusName = 16

// Limits of a classic CAN frame's identifier (ISO 11898-1).
const (
	maxStdID = 0x7FF
	maxExtID = 0x1FFFFFFF
	// extIDDigits: an identifier of exactly 8 hex digits is a 29-bit one; any
	// shorter one is 11-bit (the reference server's state_raw.c checks the length
	// of the can_id element).
	extIDDigits = 8
)

// ParseCommand parses msg, one message from Next or Reader ('<' to '>'). Words
// are separated by any white space. A message that is no command of the protocol
// is Verb Unknown with a nil error; a known command with bad arguments returns an
// error whose text suits an "< error ... >" reply.
func ParseCommand(msg []byte) (Command, error) {
	f, err := fields(msg)
	if err != nil {
		return Command{}, err
	}
	if len(f) == 0 {
		return Command{}, nil
	}
	c := Command{Verb: verbOf(f[0]), Word: f[0]}
	args := f[1:]
	switch c.Verb {
	case Unknown:
		if len(args) >= 1 && (args[0] == "B" || args[0] == "C") {
			c.Verb, c.Bus = BusConfig, f[0]
		}
		return c, nil
	case Open:
		if len(args) != 1 || len(args[0]) > MaxBusName {
			return c, fmt.Errorf("open takes one bus name of at most %d characters", MaxBusName)
		}
		c.Bus = args[0]
	case RawMode, BCMMode, ControlMode, ISOTPMode, Echo:
		if len(args) != 0 {
			return c, fmt.Errorf("%s takes no arguments", c.Word)
		}
	case Send:
		c.Frame, err = parseSend(args)
	case Statistics:
		if len(args) != 1 {
			return c, errors.New("statistics takes one interval in milliseconds")
		}
		ms, perr := strconv.ParseUint(args[0], 10, 32)
		if perr != nil {
			return c, errors.New("statistics interval is not a number of milliseconds")
		}
		c.IntervalMs = uint32(ms)
	}
	return c, err
}

// fields splits the message between its '<' and '>' into words.
func fields(msg []byte) ([]string, error) {
	if len(msg) < 2 || msg[0] != '<' || msg[len(msg)-1] != '>' {
		return nil, errors.New("a message starts with < and ends with >")
	}
	return strings.Fields(string(msg[1 : len(msg)-1])), nil
}

// parseSend reads "can_id can_dlc [data]*": can_id in hex (8 digits: 29-bit),
// can_dlc in decimal 0..8, then can_dlc bytes of 1 or 2 hex digits.
func parseSend(args []string) (can.Frame, error) {
	var f can.Frame
	if len(args) < 2 {
		return f, errors.New("send takes can_id can_dlc and can_dlc data bytes")
	}
	id, ext, err := parseID(args[0])
	if err != nil {
		return f, err
	}
	f.ID, f.IsExtended = id, ext
	dlc, err := strconv.ParseUint(args[1], 10, 8)
	if err != nil || dlc > can.MaxDataLength {
		return f, fmt.Errorf("can_dlc %q is not 0..8", args[1])
	}
	f.Length = uint8(dlc)
	if len(args)-2 != int(dlc) {
		return f, fmt.Errorf("can_dlc is %d but %d data bytes follow", dlc, len(args)-2)
	}
	for i, b := range args[2:] {
		v, err := strconv.ParseUint(b, 16, 8)
		if err != nil || len(b) > 2 {
			return f, fmt.Errorf("data byte %q is not 1 or 2 hex digits", b)
		}
		f.Data[i] = byte(v)
	}
	return f, nil
}

// parseID reads a can_id: 8 hex digits are a 29-bit identifier, 1..7 an 11-bit one.
func parseID(s string) (id uint32, extended bool, err error) {
	v, perr := strconv.ParseUint(s, 16, 32)
	switch {
	case perr != nil || len(s) > extIDDigits:
		return 0, false, fmt.Errorf("can_id %q is not 1..8 hex digits", s)
	case len(s) == extIDDigits && v > maxExtID:
		return 0, false, fmt.Errorf("can_id %s is above 1FFFFFFF, the largest 29-bit identifier", s)
	case len(s) < extIDDigits && v > maxStdID:
		return 0, false, fmt.Errorf("can_id %s is above 7FF, the largest 11-bit identifier; write a 29-bit one with 8 digits", s)
	}
	return uint32(v), len(s) == extIDDigits, nil
}

// appendID appends a can_id as the protocol writes it: 3 hex digits for an 11-bit
// identifier, 8 for a 29-bit one (upper case, zero-padded).
func appendID(dst []byte, id uint32, extended bool) []byte {
	digits := 3
	if extended {
		digits = extIDDigits
	}
	return appendHex(dst, uint64(id), digits)
}

// AppendSend appends "< send can_id can_dlc [data]* >" for the data frame f, the
// data in lower-case unpadded hex as the protocol text writes it.
func AppendSend(dst []byte, f can.Frame) []byte {
	dst = append(dst, "< send "...)
	dst = appendID(dst, f.ID, f.IsExtended)
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, uint64(f.Length), 10)
	for _, b := range f.Data[:min(f.Length, can.MaxDataLength)] {
		dst = append(dst, ' ')
		dst = strconv.AppendUint(dst, uint64(b), 16)
	}
	return append(dst, " >"...)
}

const upperHex = "0123456789ABCDEF"

// appendHex appends v in upper-case hex, zero-padded to at least digits digits.
func appendHex(dst []byte, v uint64, digits int) []byte {
	for v>>(4*uint(digits)) != 0 && digits < 16 {
		digits++
	}
	for i := digits - 1; i >= 0; i-- {
		dst = append(dst, upperHex[v>>(4*uint(i))&0xF])
	}
	return dst
}
