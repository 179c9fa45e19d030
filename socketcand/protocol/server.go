package protocol

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.einride.tech/can"

	"cand/socketcan"
)

// The server's fixed messages.
const (
	MsgHi   = "< hi >"   // greeting, on connect
	MsgOK   = "< ok >"   // a bus opened, a mode switched
	MsgEcho = "< echo >" // the answer to "< echo >"
)

// Stat is "< stat rbytes rpackets tbytes tpackets >": the bus's received and
// transmitted data bytes and frames.
type Stat struct {
	RXBytes, RXFrames, TXBytes, TXFrames uint64
}

// usecDigits is the width of the microseconds after a timestamp's point.
const usecDigits = 6

// appendTime appends t as seconds.microseconds since the Unix epoch.
func appendTime(dst []byte, t time.Time) []byte {
	dst = strconv.AppendInt(dst, t.Unix(), 10)
	dst = append(dst, '.')
	us := strconv.AppendInt(nil, int64(t.Nanosecond()/1000), 10)
	for range usecDigits - len(us) {
		dst = append(dst, '0')
	}
	return append(dst, us...)
}

// appendData appends bytes as upper-case hex, two digits each, no spaces.
func appendData(dst []byte, data []byte) []byte {
	for _, b := range data {
		dst = append(dst, upperHex[b>>4], upperHex[b&0xF])
	}
	return dst
}

// AppendFrame appends "< frame can_id seconds.useconds [data]* >" for the data
// frame f received at t: can_id as appendID writes it, the data as upper-case hex
// without spaces. With no data the message has two spaces before its '>', as the
// reference server writes it. The protocol has no form for remote frames.
func AppendFrame(dst []byte, f can.Frame, t time.Time) []byte {
	dst = append(dst, "< frame "...)
	dst = appendID(dst, f.ID, f.IsExtended)
	dst = append(dst, ' ')
	dst = appendTime(dst, t)
	dst = append(dst, ' ')
	dst = appendData(dst, f.Data[:min(f.Length, can.MaxDataLength)])
	return append(dst, " >"...)
}

// AppendErrorFrame appends "< error class seconds.useconds data >" for the
// SocketCAN error frame e received at t: class is the can_id's error classes in
// hex, at least 3 digits (linux/can/error.h), then the time, as the reference
// server writes them; cand adds the 8 data bytes, as a frame's data, which carry
// the details (controller state, error counters).
func AppendErrorFrame(dst []byte, e socketcan.ErrorFrame, t time.Time) []byte {
	dst = append(dst, "< error "...)
	dst = appendHex(dst, uint64(e.Class&socketcan.CAN_ERR_MASK), 3)
	dst = append(dst, ' ')
	dst = appendTime(dst, t)
	dst = append(dst, ' ')
	dst = appendData(dst, e.Data[:])
	return append(dst, " >"...)
}

// AppendStat appends "< stat rbytes rpackets tbytes tpackets >".
func AppendStat(dst []byte, s Stat) []byte {
	dst = append(dst, "< stat "...)
	for i, v := range [...]uint64{s.RXBytes, s.RXFrames, s.TXBytes, s.TXFrames} {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = strconv.AppendUint(dst, v, 10)
	}
	return append(dst, " >"...)
}

// AppendError appends "< error text >", the server's answer to a command it
// cannot carry out. Angle brackets in text become spaces: they would end the
// message early.
func AppendError(dst []byte, text string) []byte {
	dst = append(dst, "< error "...)
	for i := range len(text) {
		c := text[i]
		if c == '<' || c == '>' {
			c = ' '
		}
		dst = append(dst, c)
	}
	return append(dst, " >"...)
}

// Kind says what a server message is.
type Kind uint8

const (
	KindOther      Kind = iota // not a message this package knows
	KindHi                     // < hi >
	KindOK                     // < ok >
	KindEcho                   // < echo >
	KindFrame                  // < frame ... >: Frame, Time
	KindErrorFrame             // < error class time [data] >: ErrorFrame, Time
	KindError                  // < error text >: Text
	KindStat                   // < stat ... >: Stat
)

// ServerMessage is one parsed server message; the fields its Kind names are set.
type ServerMessage struct {
	Kind       Kind
	Frame      can.Frame
	ErrorFrame socketcan.ErrorFrame
	Time       time.Time
	Stat       Stat
	Text       string
}

// ParseServer parses a message the server sent ('<' to '>'), for clients and
// tests. An error frame's data may be missing (the reference server sends none);
// then it is zero. A message of no known kind is KindOther with a nil error.
func ParseServer(msg []byte) (ServerMessage, error) {
	f, err := fields(msg)
	if err != nil || len(f) == 0 {
		return ServerMessage{}, err
	}
	args := f[1:]
	var m ServerMessage
	switch f[0] {
	case "hi":
		m.Kind = bare(args, KindHi)
	case "ok":
		m.Kind = bare(args, KindOK)
	case "echo":
		m.Kind = bare(args, KindEcho)
	case "frame":
		m.Kind = KindFrame
		m.Frame, m.Time, err = parseFrame(args)
	case "error":
		if len(args) >= 2 && isClass(args[0]) && isTime(args[1]) {
			m.Kind = KindErrorFrame
			m.ErrorFrame, m.Time, err = parseErrorFrame(args)
		} else {
			m.Kind, m.Text = KindError, strings.Join(args, " ")
		}
	case "stat":
		m.Kind = KindStat
		m.Stat, err = parseStat(args)
	}
	return m, err
}

// bare is k for a message without arguments, else KindOther.
func bare(args []string, k Kind) Kind {
	if len(args) != 0 {
		return KindOther
	}
	return k
}

func parseFrame(args []string) (f can.Frame, t time.Time, err error) {
	if len(args) < 2 || len(args) > 3 {
		return f, t, errors.New("frame takes can_id, a time and the data")
	}
	if f.ID, f.IsExtended, err = parseID(args[0]); err != nil {
		return f, t, err
	}
	if t, err = parseTime(args[1]); err != nil {
		return f, t, err
	}
	if len(args) == 3 {
		n, err := parseData(f.Data[:], args[2])
		if err != nil {
			return f, t, err
		}
		f.Length = uint8(n)
	}
	return f, t, nil
}

func parseErrorFrame(args []string) (e socketcan.ErrorFrame, t time.Time, err error) {
	class, _ := strconv.ParseUint(args[0], 16, 32)
	e.Class = uint32(class)
	t, err = parseTime(args[1])
	switch {
	case err != nil:
	case len(args) > 3:
		err = errors.New("error frame takes a class, a time and the data")
	case len(args) == 3:
		var n int
		if n, err = parseData(e.Data[:], args[2]); err == nil && n != len(e.Data) {
			err = fmt.Errorf("error frame data %q is not %d bytes", args[2], len(e.Data))
		}
	}
	return e, t, err
}

// isClass: 1..8 hex digits of error classes (CAN_ERR_MASK).
func isClass(s string) bool {
	v, err := strconv.ParseUint(s, 16, 32)
	return err == nil && len(s) <= 8 && v <= socketcan.CAN_ERR_MASK
}

// isTime: digits, a point, six digits.
func isTime(s string) bool {
	sec, us, ok := strings.Cut(s, ".")
	return ok && len(sec) > 0 && len(us) == usecDigits && digits(sec) && digits(us)
}

func digits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func parseTime(s string) (time.Time, error) {
	if !isTime(s) {
		return time.Time{}, fmt.Errorf("time %q is not seconds.microseconds", s)
	}
	sec, us, _ := strings.Cut(s, ".")
	secs, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q: %w", s, err)
	}
	usecs, _ := strconv.ParseInt(us, 10, 64)
	return time.Unix(secs, usecs*1000), nil
}

// parseData reads two hex digits a byte into dst and returns how many.
func parseData(dst []byte, s string) (int, error) {
	if len(s)%2 != 0 || len(s)/2 > len(dst) {
		return 0, fmt.Errorf("data %q is not up to %d bytes of two hex digits", s, len(dst))
	}
	for i := 0; i < len(s); i += 2 {
		v, err := strconv.ParseUint(s[i:i+2], 16, 8)
		if err != nil {
			return 0, fmt.Errorf("data %q is not hex", s)
		}
		dst[i/2] = byte(v)
	}
	return len(s) / 2, nil
}

func parseStat(args []string) (s Stat, err error) {
	if len(args) != 4 {
		return s, errors.New("stat takes four counters")
	}
	for i, p := range [...]*uint64{&s.RXBytes, &s.RXFrames, &s.TXBytes, &s.TXFrames} {
		if *p, err = strconv.ParseUint(args[i], 10, 64); err != nil {
			return s, fmt.Errorf("stat counter %q is not a number", args[i])
		}
	}
	return s, nil
}
