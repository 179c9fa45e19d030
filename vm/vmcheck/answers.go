package main

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// answersSpec: N frames with ID Req were sent, and an answering peer must have
// answered each with ID Ans and the same data, in the same order.
//
//	REQ:ANS:N[:ext]
type answersSpec struct {
	Req, Ans uint32
	N        int
	Ext      bool
}

func parseAnswers(s string) (answersSpec, error) {
	var a answersSpec
	parts := strings.Split(s, ":")
	if len(parts) < 3 || len(parts) > 4 {
		return a, fmt.Errorf("-answers %q: want REQ:ANS:N[:ext], e.g. 0x123:0x124:1000", s)
	}
	var err error
	if a.Req, err = parseHexID(parts[0]); err != nil {
		return a, fmt.Errorf("-answers %q: request %v", s, err)
	}
	if a.Ans, err = parseHexID(parts[1]); err != nil {
		return a, fmt.Errorf("-answers %q: answer %v", s, err)
	}
	if a.N, err = strconv.Atoi(parts[2]); err != nil || a.N < 1 {
		return a, fmt.Errorf("-answers %q: count %q is not a positive number", s, parts[2])
	}
	if len(parts) == 4 {
		if parts[3] != "ext" {
			return a, fmt.Errorf("-answers %q: unknown option %q (want ext)", s, parts[3])
		}
		a.Ext = true
	}
	return a, nil
}

func (a answersSpec) name() string { return fmt.Sprintf("answers-%#x", a.Req) }

// check returns "" when the dump holds exactly N requests and N answers, the i-th
// answer carrying the i-th request's data and received after it; else the first
// violation. "After" compares candump's receive timestamps, not line order: on an
// SMP kernel an answer written the instant its request arrives can be queued to
// candump's socket before the request (per-CPU backlogs), but not stamped earlier.
func (a answersSpec) check(frames []frame) string {
	var reqs, ans []*frame
	for i := range frames {
		f := &frames[i]
		switch {
		case f.is(a.Req, a.Ext):
			reqs = append(reqs, f)
		case f.is(a.Ans, a.Ext):
			ans = append(ans, f)
		}
	}
	if len(reqs) != a.N {
		return fmt.Sprintf("%d requests with ID %#x in the dump, want %d (the sender or candump lost frames)", len(reqs), a.Req, a.N)
	}
	for i, r := range reqs {
		if i >= len(ans) {
			return fmt.Sprintf("%d answers with ID %#x, want %d: first unanswered is request #%d (line %d %s)",
				len(ans), a.Ans, a.N, i+1, r.Line, r.Text)
		}
		got := ans[i]
		if !bytes.Equal(got.Data, r.Data) {
			hint := "not found among the answers: lost or corrupted"
			for j, o := range ans {
				if j != i && bytes.Equal(o.Data, r.Data) {
					hint = fmt.Sprintf("found as answer #%d (line %d): reordered", j+1, o.Line)
					break
				}
			}
			return fmt.Sprintf("answer #%d (line %d %s) carries %X, want %X from request #%d (line %d %s); that data is %s",
				i+1, got.Line, got.Text, got.Data, r.Data, i+1, r.Line, r.Text, hint)
		}
		if got.Usec < r.Usec {
			return fmt.Sprintf("answer #%d (line %d %s) was received %d µs before its request (line %d %s)",
				i+1, got.Line, got.Text, r.Usec-got.Usec, r.Line, r.Text)
		}
	}
	if len(ans) > a.N {
		x := ans[a.N]
		return fmt.Sprintf("%d answers with ID %#x, want %d: first extra is line %d %s", len(ans), a.Ans, a.N, x.Line, x.Text)
	}
	return ""
}
