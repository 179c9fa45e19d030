package protocol

import (
	"bytes"
	"errors"
	"io"
)

// MaxMessage bounds one message in bytes, '<' to '>'. The reference server reads
// at most about 8 KiB at once (MAXLEN in its socketcand.h, sized for ISO-TP PDUs).
const MaxMessage = 8192

// ErrTooLong is returned by Reader.Next for a message that has no '>' within
// MaxMessage bytes of its '<'.
var ErrTooLong = errors.New("socketcand: a message is longer than 8192 bytes (no '>' after its '<')")

// Next finds the first complete message in b: the bytes from its '<' up to and
// including the first '>' after it. n is how many bytes of b the caller may drop
// afterwards: the message and whatever came before it, which belongs to no
// message (the reference server drops such bytes too). With no complete message
// in b, msg is nil and n counts the bytes before the first '<' (all of b when it
// holds none).
func Next(b []byte) (msg []byte, n int) {
	start := bytes.IndexByte(b, '<')
	if start < 0 {
		return nil, len(b)
	}
	end := bytes.IndexByte(b[start+1:], '>')
	if end < 0 {
		return nil, start
	}
	end += start + 1
	return b[start : end+1], end + 1
}

// readChunk is the least room Reader keeps for one read.
const readChunk = 4096

// Reader reads messages from a byte stream in which they may be split across
// reads anywhere, or several may arrive in one read.
type Reader struct {
	r   io.Reader
	buf []byte // buf[off:] is read but not yet returned
	off int
	err error // from r, returned once buf holds no complete message
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: r, buf: make([]byte, 0, MaxMessage+readChunk)}
}

// Next returns the next message, '<' to '>'. It stays valid until the next call.
// The error is the reader's (io.EOF at the end of the stream; a message cut off
// by it is lost) or ErrTooLong.
func (rd *Reader) Next() ([]byte, error) {
	for {
		msg, n := Next(rd.buf[rd.off:])
		rd.off += n
		if len(msg) > MaxMessage {
			return nil, ErrTooLong
		}
		if msg != nil {
			return msg, nil
		}
		rest := copy(rd.buf[:cap(rd.buf)], rd.buf[rd.off:])
		rd.buf, rd.off = rd.buf[:rest], 0
		if rest >= MaxMessage { // and no '>' yet
			return nil, ErrTooLong
		}
		if rd.err != nil {
			return nil, rd.err
		}
		m, err := rd.r.Read(rd.buf[rest:cap(rd.buf)])
		rd.buf = rd.buf[:rest+m]
		rd.err = err
	}
}
