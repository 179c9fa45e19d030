package slcan

import (
	"go.einride.tech/can"
)

// Bitrates is the kernel's slcan_bitrate_const: `Sn` selects Bitrates[n], and
// `ip link set … type can bitrate` takes no other rate (the CAN netlink code
// checks can_priv.bitrate_const).
var Bitrates = [...]uint32{10000, 20000, 50000, 100000, 125000, 250000, 500000, 800000, 1000000}

// BitrateIndex returns n with Bitrates[n] == rate, or false.
func BitrateIndex(rate uint32) (int, bool) {
	for i, r := range Bitrates {
		if r == rate {
			return i, true
		}
	}
	return 0, false
}

// Kind says what a line from the kernel is.
type Kind uint8

const (
	Empty       Kind = iota // nothing between two line ends
	Frame                   // t, T, r, R: Line.Frame
	Bitrate                 // S0..S8: Line.Bitrate
	Open                    // O
	Close                   // C
	ClearErrors             // F
	Unknown                 // well-formed in length but a command cand does not take (e.g. V, N, Z)
	Malformed               // a frame or S command that does not parse, or a line too long
	numKinds
)

// NumKinds is the number of Kind values, for per-kind counter arrays.
const NumKinds = int(numKinds)

var kindNames = [numKinds]string{"empty", "frame", "bitrate", "open", "close", "clear_errors", "unknown", "malformed"}

// String returns a short lower-case name usable as a metric label value.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "invalid"
}

// Line is one parsed line.
type Line struct {
	Kind    Kind
	Frame   can.Frame // Kind Frame
	Bitrate uint32    // Kind Bitrate: Bitrates[n]
	Index   int       // Kind Bitrate: n
}

// Widths of the frame line's fields (slcan-core.c: SLC_SFF_ID_LEN, SLC_EFF_ID_LEN).
const (
	sffIDLen = 3
	effIDLen = 8
	sffMask  = 0x7ff
	effMask  = 0x1fffffff
	// MaxLine is the longest line either side writes: an extended data frame
	// with 8 bytes (T, 8 ID digits, DLC, 16 data digits).
	MaxLine = 1 + effIDLen + 1 + 2*8
)

// Parse reads one line without its CR. It accepts what the kernel writes:
// frames with exact field widths (hex digits in either case; a standard ID up to
// 0x7ff, an extended one up to 0x1fffffff; a data frame with exactly DLC bytes,
// a remote frame with none), S0..S8, O, C and F. Parse never allocates.
func Parse(b []byte) Line {
	if len(b) == 0 {
		return Line{Kind: Empty}
	}
	switch b[0] {
	case 't', 'T', 'r', 'R':
		f, ok := parseFrame(b)
		if !ok {
			return Line{Kind: Malformed}
		}
		return Line{Kind: Frame, Frame: f}
	case 'S':
		if len(b) != 2 || b[1] < '0' || b[1] > '8' {
			return Line{Kind: Malformed}
		}
		n := int(b[1] - '0')
		return Line{Kind: Bitrate, Bitrate: Bitrates[n], Index: n}
	case 'O', 'C', 'F':
		if len(b) != 1 {
			return Line{Kind: Malformed}
		}
		return Line{Kind: map1(b[0])}
	}
	if len(b) > MaxLine {
		return Line{Kind: Malformed}
	}
	return Line{Kind: Unknown}
}

func map1(c byte) Kind {
	switch c {
	case 'O':
		return Open
	case 'C':
		return Close
	}
	return ClearErrors
}

func parseFrame(b []byte) (f can.Frame, ok bool) {
	idLen := sffIDLen
	if b[0] == 'T' || b[0] == 'R' {
		idLen = effIDLen
		f.IsExtended = true
	}
	f.IsRemote = b[0] == 'r' || b[0] == 'R'
	if len(b) < 1+idLen+1 {
		return f, false
	}
	var id uint32
	for _, c := range b[1 : 1+idLen] {
		v, ok := unhex(c)
		if !ok {
			return f, false
		}
		id = id<<4 | uint32(v)
	}
	if (!f.IsExtended && id > sffMask) || id > effMask {
		return f, false
	}
	f.ID = id
	dlc := b[1+idLen]
	if dlc < '0' || dlc > '8' {
		return f, false
	}
	f.Length = dlc - '0'
	data := b[2+idLen:]
	if f.IsRemote {
		return f, len(data) == 0
	}
	if len(data) != 2*int(f.Length) {
		return f, false
	}
	for i := range int(f.Length) {
		hi, ok1 := unhex(data[2*i])
		lo, ok2 := unhex(data[2*i+1])
		if !ok1 || !ok2 {
			return f, false
		}
		f.Data[i] = hi<<4 | lo
	}
	return f, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

const hexDigits = "0123456789ABCDEF"

// AppendFrame appends f as a t/T/r/R line with its CR, in the kernel's form
// (upper-case hex, slc_encaps). The ID is masked to 11 or 29 bits; a Length
// above 8 is sent as 8 (a classic frame's DLC 9..15 carries 8 bytes).
func AppendFrame(dst []byte, f can.Frame) []byte {
	c := byte('t')
	if f.IsRemote {
		c = 'r'
	}
	idLen, id := sffIDLen, f.ID&sffMask
	if f.IsExtended {
		c -= 'a' - 'A'
		idLen, id = effIDLen, f.ID&effMask
	}
	dst = append(dst, c)
	for i := idLen - 1; i >= 0; i-- {
		dst = append(dst, hexDigits[(id>>(4*uint(i)))&0xf])
	}
	n := min(f.Length, 8)
	dst = append(dst, '0'+n)
	if !f.IsRemote {
		for _, v := range f.Data[:n] {
			dst = append(dst, hexDigits[v>>4], hexDigits[v&0xf])
		}
	}
	return append(dst, '\r')
}

// State is a bus state as an `s` line names it.
type State byte

const (
	StateActive  State = 'a'
	StateWarning State = 'w'
	StatePassive State = 'p'
	StateBusOff  State = 'b'
)

// AppendState appends an `s` line: the state, then the RX and the TX error
// counter in three decimal digits each (slc_bump_state reads them in that
// order; a counter above 999 is written as 999).
func AppendState(dst []byte, s State, rec, tec int) []byte {
	dst = append(dst, 's', byte(s))
	dst = append3(dst, rec)
	dst = append3(dst, tec)
	return append(dst, '\r')
}

func append3(dst []byte, v int) []byte {
	v = min(max(v, 0), 999)
	return append(dst, byte('0'+v/100), byte('0'+v/10%10), byte('0'+v%10))
}

// The letters of an `e` line (slc_bump_err).
const (
	ErrAck        = 'a' // no ACK: tx_errors, CAN_ERR_ACK
	ErrBit0       = 'b' // could not send a dominant bit: tx_errors
	ErrBit1       = 'B' // could not send a recessive bit: tx_errors
	ErrCRC        = 'c' // CRC error: rx_errors
	ErrForm       = 'f' // form error: rx_errors
	ErrRXOverrun  = 'o' // RX overrun: rx_errors and rx_over_errors, CAN_ERR_CRTL_RX_OVERFLOW
	ErrTXOverrun  = 'O' // TX overrun: tx_errors, CAN_ERR_CRTL_TX_OVERFLOW
	ErrStuff      = 's' // stuff error: rx_errors
	maxErrLetters = 8   // the count is one digit, 1..8
)

// AppendErrors appends an `e` line with the given letters (at most 8 are
// written; none appends nothing).
func AppendErrors(dst []byte, letters ...byte) []byte {
	n := min(len(letters), maxErrLetters)
	if n == 0 {
		return dst
	}
	dst = append(dst, 'e', byte('0'+n))
	dst = append(dst, letters[:n]...)
	return append(dst, '\r')
}
