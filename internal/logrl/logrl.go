// Package logrl limits the rate of repeated log records: a slog.Handler that
// passes the first Burst records with the same level, message and key
// attributes (the controller, the interface) in each Interval, suppresses the
// rest, and once the interval is over writes one record saying how many it
// suppressed. A chip that keeps failing then costs the journal a few lines a
// minute, not one per retry.
package logrl

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// Options configure a Handler. The zero value limits Warn and above to 5
// records per 10 s for each message, told apart by message alone.
type Options struct {
	Interval time.Duration // default 10s
	Burst    int           // records passed per interval and kind; default 5
	// Keys are the attributes that make records of the same message different
	// kinds (e.g. "controller", "interface"); others, such as an error's text,
	// do not.
	Keys []string
	// Level is the lowest level limited; records below always pass. Default Warn.
	Level slog.Leveler
}

// maxKinds bounds the kinds remembered; past it, kinds whose interval is over
// are forgotten first.
const maxKinds = 1024

// Handler limits the records it passes to its inner handler. It is safe for
// concurrent use; Handlers derived with WithAttrs and WithGroup share the
// limits.
type Handler struct {
	inner slog.Handler
	st    *state
	keyed []slog.Attr // key attributes added with WithAttrs
}

var _ slog.Handler = (*Handler)(nil)

type state struct {
	opt   Options
	now   func() time.Time
	after func(d time.Duration, f func()) // time.AfterFunc; tests replace both
	mu    sync.Mutex
	kinds map[string]*kind
}

// kind is one message with its key attributes, in its current interval.
type kind struct {
	start      time.Time
	passed     int
	suppressed int
	report     slog.Handler // where the summary goes: the inner handler of the first suppressed record
	level      slog.Level
	msg        string
	keys       []slog.Attr // the record's own key attributes
}

// New wraps inner.
func New(inner slog.Handler, opt Options) *Handler {
	if opt.Interval <= 0 {
		opt.Interval = 10 * time.Second
	}
	if opt.Burst <= 0 {
		opt.Burst = 5
	}
	if opt.Level == nil {
		opt.Level = slog.LevelWarn
	}
	st := &state{opt: opt, now: time.Now, after: func(d time.Duration, f func()) { time.AfterFunc(d, f) }, kinds: map[string]*kind{}}
	return &Handler{inner: inner, st: st}
}

func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.inner = h.inner.WithAttrs(as)
	c.keyed = slices.Clip(h.keyed)
	for _, a := range as {
		if slices.Contains(h.st.opt.Keys, a.Key) {
			c.keyed = append(c.keyed, a)
		}
	}
	return &c
}

func (h *Handler) WithGroup(name string) slog.Handler {
	c := *h
	c.inner = h.inner.WithGroup(name)
	return &c
}

// Handle passes r, or counts it as suppressed.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	st := h.st
	if r.Level < st.opt.Level.Level() {
		return h.inner.Handle(ctx, r)
	}
	var own []slog.Attr // the record's key attributes; the handler's are in h.inner already
	r.Attrs(func(a slog.Attr) bool {
		if slices.Contains(st.opt.Keys, a.Key) {
			own = append(own, a)
		}
		return true
	})
	id := kindID(r.Level, r.Message, append(slices.Clip(h.keyed), own...))
	st.mu.Lock()
	now := st.now()
	k := st.kinds[id]
	if k == nil || (k.suppressed == 0 && !now.Before(k.start.Add(st.opt.Interval))) {
		st.forget(now)
		k = &kind{start: now, level: r.Level, msg: r.Message, keys: own}
		st.kinds[id] = k
	}
	if k.passed < st.opt.Burst {
		k.passed++
		st.mu.Unlock()
		return h.inner.Handle(ctx, r)
	}
	k.suppressed++
	if k.suppressed == 1 {
		k.report = h.inner
		st.after(k.start.Add(st.opt.Interval).Sub(now), func() { st.summarize(id, k) })
	}
	st.mu.Unlock()
	return nil
}

// kindID is what tells kinds apart: level, message and the key attributes.
func kindID(l slog.Level, msg string, keys []slog.Attr) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d\x00%s", l, msg)
	for _, a := range keys {
		fmt.Fprintf(&b, "\x00%s=%s", a.Key, a.Value.Resolve())
	}
	return b.String()
}

// forget drops kinds whose interval is over and that suppressed nothing, once
// there are too many (mu held).
func (st *state) forget(now time.Time) {
	if len(st.kinds) < maxKinds {
		return
	}
	for id, k := range st.kinds {
		if k.suppressed == 0 && !now.Before(k.start.Add(st.opt.Interval)) {
			delete(st.kinds, id)
		}
	}
}

// summarize ends kind k's interval: it writes how many records it suppressed,
// with its message and key attributes, at its level.
func (st *state) summarize(id string, k *kind) {
	st.mu.Lock()
	if st.kinds[id] != k {
		st.mu.Unlock()
		return // already summarized (Flush)
	}
	delete(st.kinds, id)
	n := k.suppressed
	st.mu.Unlock()
	r := slog.NewRecord(st.now(), k.level, fmt.Sprintf("suppressed %d similar messages", n), 0)
	r.AddAttrs(slog.String("message", k.msg))
	r.AddAttrs(k.keys...)
	r.AddAttrs(slog.Duration("interval", st.opt.Interval))
	k.report.Handle(context.Background(), r)
}

// Flush writes the summary of every interval that suppressed records, now (at
// exit: its timer would come too late).
func (h *Handler) Flush() {
	st := h.st
	st.mu.Lock()
	pending := map[string]*kind{}
	for id, k := range st.kinds {
		if k.suppressed > 0 {
			pending[id] = k
		}
	}
	st.mu.Unlock()
	ids := make([]string, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		st.summarize(id, pending[id])
	}
}
