package slcan

// Lines splits a byte stream into lines at CR or BEL (the kernel's
// slcan_unesc ends a line at either). A line longer than MaxLine is reported
// once as too long at its end and its bytes are not kept, so a stream that never
// sends a line end costs a bounded buffer. The zero value is ready.
type Lines struct {
	buf  [MaxLine]byte
	n    int
	over bool // the current line passed MaxLine
}

// Feed passes each complete line in p (without its end) to fn, in order; a
// line too long is passed as nil with tooLong set. The slice is valid only
// during the call. Bytes after the last line end wait for the next Feed.
func (l *Lines) Feed(p []byte, fn func(line []byte, tooLong bool)) {
	for _, c := range p {
		if c == '\r' || c == '\a' {
			if l.over {
				fn(nil, true)
			} else {
				fn(l.buf[:l.n], false)
			}
			l.n, l.over = 0, false
			continue
		}
		if l.over {
			continue
		}
		if l.n == len(l.buf) {
			l.over = true
			continue
		}
		l.buf[l.n] = c
		l.n++
	}
}

// Pending is the number of bytes of an unfinished line held (MaxLine+1 once
// it is too long).
func (l *Lines) Pending() int {
	if l.over {
		return MaxLine + 1
	}
	return l.n
}
