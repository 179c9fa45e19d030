package canbus

// Timer is an event in the bus's discrete-event queue: its func runs with the world
// lock held when the bus reaches its time, either lazily (AdvanceTo) or from the Run
// goroutine. A Timer is owned by one node and reused; arming it never allocates once
// the queue has grown to the number of timers in use.
type Timer struct {
	fn  func(at int64)
	at  int64
	seq uint64 // arming order: ties at the same time fire first-armed first
	idx int    // position in the heap, -1 when not armed
}

// NewTimer returns an unarmed timer that calls fn.
func NewTimer(fn func(at int64)) *Timer { return &Timer{fn: fn, idx: -1} }

// Armed reports whether t is in the queue.
func (t *Timer) Armed() bool { return t.idx >= 0 }

// When is the time t is armed for (meaningful only if Armed).
func (t *Timer) When() int64 { return t.at }

// timerHeap is a binary min-heap on (at, seq).
type timerHeap struct {
	h   []*Timer
	seq uint64
}

func (q *timerHeap) less(i, j int) bool {
	a, b := q.h[i], q.h[j]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (q *timerHeap) swap(i, j int) {
	q.h[i], q.h[j] = q.h[j], q.h[i]
	q.h[i].idx = i
	q.h[j].idx = j
}

func (q *timerHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			return
		}
		q.swap(i, p)
		i = p
	}
}

func (q *timerHeap) down(i int) {
	n := len(q.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && q.less(r, l) {
			m = r
		}
		if !q.less(m, i) {
			return
		}
		q.swap(i, m)
		i = m
	}
}

// arm (re)schedules t at at.
func (q *timerHeap) arm(t *Timer, at int64) {
	q.seq++
	t.at, t.seq = at, q.seq
	if t.idx >= 0 {
		q.up(t.idx)
		q.down(t.idx)
		return
	}
	t.idx = len(q.h)
	q.h = append(q.h, t)
	q.up(t.idx)
}

func (q *timerHeap) cancel(t *Timer) {
	i := t.idx
	if i < 0 {
		return
	}
	last := len(q.h) - 1
	q.swap(i, last)
	q.h[last] = nil
	q.h = q.h[:last]
	t.idx = -1
	if i < last {
		q.up(i)
		q.down(i)
	}
}

// peek returns the earliest timer or nil.
func (q *timerHeap) peek() *Timer {
	if len(q.h) == 0 {
		return nil
	}
	return q.h[0]
}
