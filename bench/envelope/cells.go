package envelope

import (
	"fmt"
	"strconv"
	"strings"

	"cand/config"
	"cand/sim"
)

// The envelope's cells as `cand bench -envelope -boards -bitrates -lengths`
// restrict them: comma-separated lists, "" for the defaults.

// ParseBoards parses a list of board profiles (nil: DefaultBoards).
func ParseBoards(s string) ([]config.SimBoard, error) {
	var out []config.SimBoard
	for _, f := range fields(s) {
		b := config.SimBoard(f)
		if _, err := sim.ProfileOf(b); err != nil {
			return nil, fmt.Errorf("bench: envelope board %q: no such board profile; use e.g. %v (docs/boards.md)", f, DefaultBoards)
		}
		out = append(out, b)
	}
	return out, nil
}

// ParseBitrates parses a list of bitrates in bit/s (nil: DefaultBitrates).
func ParseBitrates(s string) ([]uint32, error) {
	var out []uint32
	for _, f := range fields(s) {
		v, err := strconv.ParseUint(f, 10, 32)
		if err != nil || v == 0 {
			return nil, fmt.Errorf("bench: envelope bitrate %q: give bit/s as a positive integer, e.g. %v", f, DefaultBitrates)
		}
		out = append(out, uint32(v))
	}
	return out, nil
}

// ParseLengths parses a list of frame lengths (nil: DefaultLengths).
func ParseLengths(s string) ([]string, error) {
	var out []string
	for _, f := range fields(s) {
		if _, err := workload(f, 100, 80); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// fields splits a comma-separated list, dropping empty entries.
func fields(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
