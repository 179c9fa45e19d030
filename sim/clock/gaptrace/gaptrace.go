// Package gaptrace keeps the strict clock's last looked-at gaps (sim/clock
// TraceGaps), for a test's log or the benchmark's post-mortem: a diagnostic,
// linked only into what asks for it.
package gaptrace

import (
	"fmt"
	"strings"
	"sync"

	"cand/sim/clock"
)

// Ring keeps the last n gaps it is handed. Safe from any goroutine.
type Ring struct {
	mu   sync.Mutex
	recs []clock.GapRecord
	n    int // records written
}

var _ clock.GapTracer = (*Ring)(nil)

// New returns a ring of the last n gaps (n ≥ 1).
func New(n int) *Ring { return &Ring{recs: make([]clock.GapRecord, max(n, 1))} }

// Gap implements clock.GapTracer.
func (r *Ring) Gap(g clock.GapRecord) {
	r.mu.Lock()
	r.recs[r.n%len(r.recs)] = g
	r.n++
	r.mu.Unlock()
}

// Records returns the kept gaps, oldest first.
func (r *Ring) Records() []clock.GapRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := len(r.recs)
	if r.n < k {
		return append([]clock.GapRecord(nil), r.recs[:r.n]...)
	}
	i := r.n % k
	return append(append([]clock.GapRecord(nil), r.recs[i:]...), r.recs[:i]...)
}

// Line formats one gap.
func Line(g clock.GapRecord) string {
	return fmt.Sprintf("at %d virt %d free %d gap %d short %d model %d on %d outlier %d runq %d rest %d unmatched %d %c board %d removed %d kept %d own %d",
		g.At, g.Virt, g.Free, g.Gap, g.Short, g.Model, g.On, g.Outlier, g.RunQ, g.Rest, g.Unmatched, g.Kind, g.Board, g.Removed, g.Kept, g.Own)
}

// Dump formats Records one gap a line, for a test's log.
func (r *Ring) Dump() string {
	var b strings.Builder
	for _, g := range r.Records() {
		b.WriteString(Line(g))
		b.WriteByte('\n')
	}
	return b.String()
}
