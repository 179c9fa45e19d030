package main

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// answersSpec: N frames with ID Req were sent, and an answering peer must have
// answered each with ID Ans and the same data, in the same order. Lossy (a flood
// that overruns a queue on purpose): the answers must be an in-order subsequence
// of the requests; which ones are missing is for the ledger (conserve.go) to
// account for.
//
//	REQ:ANS:N[:ext][:lossy]
type answersSpec struct {
	Req, Ans uint32
	N        int
	Ext      bool
	Lossy    bool
}

func parseAnswers(s string) (answersSpec, error) {
	var a answersSpec
	parts := strings.Split(s, ":")
	if len(parts) < 3 {
		return a, fmt.Errorf("-answers %q: want REQ:ANS:N[:ext][:lossy], e.g. 0x123:0x122:1000", s)
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
	for _, opt := range parts[3:] {
		switch opt {
		case "ext":
			a.Ext = true
		case "lossy":
			a.Lossy = true
		default:
			return a, fmt.Errorf("-answers %q: unknown option %q (want ext or lossy)", s, opt)
		}
	}
	return a, nil
}

func (a answersSpec) name() string { return fmt.Sprintf("answers-%#x", a.Req) }

// check returns the number of answers and "" when the dump holds exactly N
// requests and N answers, the i-th answer carrying the i-th request's data and
// received after it (Lossy: each answer carrying the data of a request after the
// one the previous answer matched); else the first violation. "After" compares
// candump's receive timestamps, not line order: on an SMP kernel an answer
// written the instant its request arrives can be queued to candump's socket
// before the request (per-CPU backlogs), but not stamped earlier.
func (a answersSpec) check(frames []frame) (answered int, reason string) {
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
		return len(ans), fmt.Sprintf("%d requests with ID %#x in the dump, want %d (the sender or candump lost frames)", len(reqs), a.Req, a.N)
	}
	if a.Lossy {
		return len(ans), a.subsequence(reqs, ans)
	}
	for i, r := range reqs {
		if i >= len(ans) {
			return len(ans), fmt.Sprintf("%d answers with ID %#x, want %d: first unanswered is request #%d (line %d %s)",
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
			return len(ans), fmt.Sprintf("answer #%d (line %d %s) carries %X, want %X from request #%d (line %d %s); that data is %s",
				i+1, got.Line, got.Text, got.Data, r.Data, i+1, r.Line, r.Text, hint)
		}
		if reason := answeredAfter(i, got, r); reason != "" {
			return len(ans), reason
		}
	}
	if len(ans) > a.N {
		x := ans[a.N]
		return len(ans), fmt.Sprintf("%d answers with ID %#x, want %d: first extra is line %d %s", len(ans), a.Ans, a.N, x.Line, x.Text)
	}
	return len(ans), ""
}

// subsequence checks that the answers match requests in order, skipping the
// unanswered ones: the requests need distinct data (cangen -D i).
func (a answersSpec) subsequence(reqs, ans []*frame) string {
	j := 0 // next request an answer may match
	for i, got := range ans {
		k := j
		for k < len(reqs) && !bytes.Equal(reqs[k].Data, got.Data) {
			k++
		}
		if k == len(reqs) {
			hint := "no request carries it: corrupted or not an answer"
			for m := 0; m < j; m++ {
				if bytes.Equal(reqs[m].Data, got.Data) {
					hint = fmt.Sprintf("it is request #%d's (line %d), already passed: reordered or repeated", m+1, reqs[m].Line)
					break
				}
			}
			return fmt.Sprintf("answer #%d (line %d %s) carries %X: %s", i+1, got.Line, got.Text, got.Data, hint)
		}
		if reason := answeredAfter(i, got, reqs[k]); reason != "" {
			return reason
		}
		j = k + 1
	}
	return ""
}

func answeredAfter(i int, got, r *frame) string {
	if got.Usec < r.Usec {
		return fmt.Sprintf("answer #%d (line %d %s) was received %d µs before its request (line %d %s)",
			i+1, got.Line, got.Text, r.Usec-got.Usec, r.Line, r.Text)
	}
	return ""
}
