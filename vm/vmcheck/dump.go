package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CAN identifier flags as candump prints them (linux/can.h): an error frame is
// printed with an 8-digit ID that carries CAN_ERR_FLAG.
const (
	canErrFlag = 0x20000000
	canEFFMask = 0x1FFFFFFF
	canSFFMask = 0x7FF
)

// frame is one line of `candump -L` output: "(sec.usec) iface ID#DATA".
type frame struct {
	Line  int    // 1-based line number in the dump
	Usec  int64  // receive timestamp in µs (candump's "(sec.usec)")
	Iface string // interface name
	ID    uint32 // identifier without flags
	Ext   bool   // 29-bit identifier (8 hex digits)
	Err   bool   // error frame (CAN_ERR_FLAG set)
	RTR   bool   // remote request ("ID#R")
	FD    bool   // CAN FD frame ("ID##F...")
	Data  []byte // payload
	Text  string // the "ID#DATA" field as printed, for messages
}

// readDump parses a whole `candump -L` dump and returns its frames and the frames
// candump's own socket dropped (candump -d writes "DROPCOUNT: dropped N CAN
// frames on 'IF' socket (total drops T)" lines, candump.c, can-utils). Blank
// lines are skipped; any other line that is not in candump's log format is an
// error naming the line.
func readDump(r io.Reader) (frames []frame, drops int64, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "DROPCOUNT:") {
			var d int64
			if _, err := fmt.Sscanf(line, "DROPCOUNT: dropped %d ", &d); err != nil || d < 1 {
				return nil, 0, fmt.Errorf("dump line %d %q: not candump's \"DROPCOUNT: dropped N CAN frames ...\"", n, line)
			}
			drops += d
			continue
		}
		f, err := parseLine(line)
		if err != nil {
			return nil, 0, fmt.Errorf("dump line %d %q: %v", n, line, err)
		}
		f.Line = n
		frames = append(frames, f)
	}
	if err := sc.Err(); err != nil {
		return nil, 0, fmt.Errorf("reading dump: %v", err)
	}
	return frames, drops, nil
}

// parseLine parses "(1700000000.123456) vcan0 123#DEADBEEF".
func parseLine(line string) (frame, error) {
	var f frame
	fields := strings.Fields(line)
	if len(fields) != 3 {
		return f, fmt.Errorf("want 3 fields \"(time) iface ID#DATA\" (candump -L), got %d", len(fields))
	}
	ts := fields[0]
	if len(ts) < 3 || ts[0] != '(' || ts[len(ts)-1] != ')' {
		return f, fmt.Errorf("timestamp %q is not \"(sec.usec)\"", ts)
	}
	sec, usec, ok := strings.Cut(ts[1:len(ts)-1], ".")
	s, err1 := strconv.ParseInt(sec, 10, 64)
	u, err2 := strconv.ParseInt(usec, 10, 64)
	if !ok || err1 != nil || err2 != nil || len(usec) != 6 {
		return f, fmt.Errorf("timestamp %q is not \"(sec.usec)\" with 6 digits of µs", ts)
	}
	f.Usec = s*1_000_000 + u
	f.Iface = fields[1]
	f.Text = fields[2]
	return f, parseFrameText(&f, fields[2])
}

// parseFrameText parses candump's "ID#DATA", "ID#R" and "ID##FDATA" forms.
func parseFrameText(f *frame, s string) error {
	idText, rest, ok := strings.Cut(s, "#")
	if !ok {
		return fmt.Errorf("frame %q has no '#'", s)
	}
	id, err := strconv.ParseUint(idText, 16, 32)
	if err != nil {
		return fmt.Errorf("frame ID %q is not hex", idText)
	}
	switch len(idText) {
	case 3:
		if id > canSFFMask {
			return fmt.Errorf("standard ID %q exceeds 0x7FF", idText)
		}
		f.ID = uint32(id)
	case 8:
		if id&canErrFlag != 0 {
			f.Err = true
			f.ID = uint32(id) &^ canErrFlag
		} else {
			f.Ext = true
			f.ID = uint32(id) & canEFFMask
		}
	default:
		return fmt.Errorf("frame ID %q has %d digits, want 3 (standard) or 8 (extended)", idText, len(idText))
	}
	if strings.HasPrefix(rest, "#") { // CAN FD: "##" flags nibble then data
		if len(rest) < 2 {
			return fmt.Errorf("CAN FD frame %q has no flags nibble", s)
		}
		f.FD = true
		rest = rest[2:]
	} else if strings.HasPrefix(rest, "R") {
		f.RTR = true
		return nil
	}
	data, err := hex.DecodeString(rest)
	if err != nil {
		return fmt.Errorf("frame data %q is not hex byte pairs", rest)
	}
	if !f.FD && len(data) > 8 {
		return fmt.Errorf("classic frame %q carries %d bytes, max 8", s, len(data))
	}
	f.Data = data
	return nil
}

// key says whether f carries identifier id in the given format (data frames only).
func (f *frame) is(id uint32, ext bool) bool {
	return !f.Err && !f.RTR && f.ID == id && f.Ext == ext
}
