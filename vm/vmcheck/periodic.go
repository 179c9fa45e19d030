package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"cand/internal/seqcheck"
)

// periodicSpec is what a periodic peer's frames must look like.
//
//	IDS[:min=N][:dlc=D][:counter=B][:scope=set|id][:rest=HEX][:ext]
//
// IDS is a comma-separated list of hex IDs. counter=B: the first B data bytes are a
// big-endian counter that grows by 1 (mod 2^(8B)) from one frame to the next, over
// the whole ID set (scope=set, the default: IDs sent in turn share one counter) or
// per ID (scope=id). rest=HEX: the bytes after the counter.
type periodicSpec struct {
	IDs      []uint32
	Ext      bool
	Min      int
	DLC      int // -1: any
	Counter  int // bytes; 0: no counter check
	PerID    bool
	Rest     []byte // nil: not checked
	Original string
}

func parsePeriodic(s string) (periodicSpec, error) {
	p := periodicSpec{Min: 1, DLC: -1, Original: s}
	parts := strings.Split(s, ":")
	for _, t := range strings.Split(parts[0], ",") {
		id, err := parseHexID(t)
		if err != nil {
			return p, fmt.Errorf("-periodic %q: %v", s, err)
		}
		p.IDs = append(p.IDs, id)
	}
	for _, opt := range parts[1:] {
		k, v, _ := strings.Cut(opt, "=")
		var err error
		switch k {
		case "min":
			p.Min, err = strconv.Atoi(v)
		case "dlc":
			p.DLC, err = strconv.Atoi(v)
			if err == nil && (p.DLC < 0 || p.DLC > 8) {
				err = fmt.Errorf("dlc %d outside 0..8", p.DLC)
			}
		case "counter":
			p.Counter, err = strconv.Atoi(v)
			if err == nil && (p.Counter < 0 || p.Counter > 8) {
				err = fmt.Errorf("counter %d bytes outside 0..8", p.Counter)
			}
		case "scope":
			switch v {
			case "set":
			case "id":
				p.PerID = true
			default:
				err = fmt.Errorf("scope %q: want set or id", v)
			}
		case "rest":
			p.Rest, err = hex.DecodeString(v)
		case "ext":
			p.Ext = true
		default:
			err = fmt.Errorf("unknown option %q (want min, dlc, counter, scope, rest, ext)", k)
		}
		if err != nil {
			return p, fmt.Errorf("-periodic %q: %v", s, err)
		}
	}
	return p, nil
}

// name is the check's name in VMTEST lines, e.g. "periodic-0x100".
func (p periodicSpec) name() string {
	return fmt.Sprintf("periodic-%#x", p.IDs[0])
}

func (p periodicSpec) has(f *frame) bool {
	for _, id := range p.IDs {
		if f.is(id, p.Ext) {
			return true
		}
	}
	return false
}

// check returns "" when the dump satisfies p, else the first violation.
func (p periodicSpec) check(frames []frame) string {
	var got []*frame
	for i := range frames {
		if p.has(&frames[i]) {
			got = append(got, &frames[i])
		}
	}
	if len(got) < p.Min {
		return fmt.Sprintf("%d frames with IDs %s, want at least %d", len(got), fmtIDs(p.IDs), p.Min)
	}
	last := map[uint32]*frame{} // previous frame per counter scope
	for _, f := range got {
		if p.DLC >= 0 && len(f.Data) != p.DLC {
			return fmt.Sprintf("line %d %s: DLC %d, want %d", f.Line, f.Text, len(f.Data), p.DLC)
		}
		if p.Counter == 0 {
			continue
		}
		if len(f.Data) < p.Counter {
			return fmt.Sprintf("line %d %s: %d data bytes cannot hold a %d-byte counter", f.Line, f.Text, len(f.Data), p.Counter)
		}
		if p.Rest != nil && !bytes.Equal(f.Data[p.Counter:], p.Rest) {
			return fmt.Sprintf("line %d %s: bytes after the counter are %X, want %X", f.Line, f.Text, f.Data[p.Counter:], p.Rest)
		}
		scope := uint32(0)
		if p.PerID {
			scope = f.ID
		}
		if prev, ok := last[scope]; ok {
			pc, c := counter(prev.Data[:p.Counter]), counter(f.Data[:p.Counter])
			if seqcheck.Follow(pc, c, 8*uint(p.Counter)) != seqcheck.Next {
				return fmt.Sprintf("line %d %s: counter %#x after %#x (line %d %s), want %#x (frame lost, repeated or reordered)",
					f.Line, f.Text, c, pc, prev.Line, prev.Text, (pc+1)&counterMask(p.Counter))
			}
		}
		last[scope] = f
	}
	return ""
}

// counter reads b as a big-endian unsigned number.
func counter(b []byte) uint64 {
	var c uint64
	for _, x := range b {
		c = c<<8 | uint64(x)
	}
	return c
}

func counterMask(n int) uint64 {
	if n >= 8 {
		return ^uint64(0)
	}
	return 1<<(8*uint(n)) - 1
}

func parseHexID(s string) (uint32, error) {
	id, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(s), "0x"), 16, 32)
	if err != nil || id > canEFFMask {
		return 0, fmt.Errorf("ID %q is not a hex CAN ID (0..1FFFFFFF)", s)
	}
	return uint32(id), nil
}

func fmtIDs(ids []uint32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprintf("%#x", id)
	}
	return strings.Join(s, ",")
}
