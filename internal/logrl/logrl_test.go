package logrl

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeTime is the limiter's clock: the test moves it and fires the timers.
type fakeTime struct {
	now    time.Time
	timers []timer
}

type timer struct {
	at time.Time
	f  func()
}

func (c *fakeTime) advance(d time.Duration) {
	c.now = c.now.Add(d)
	var left []timer
	for _, t := range c.timers {
		if !t.at.After(c.now) {
			t.f()
		} else {
			left = append(left, t)
		}
	}
	c.timers = left
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// take returns the lines written so far and forgets them.
func (s *syncBuffer) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := strings.Split(strings.TrimSuffix(s.b.String(), "\n"), "\n")
	s.b.Reset()
	if len(out) == 1 && out[0] == "" {
		return nil
	}
	return out
}

func newTestHandler(opt Options) (*Handler, *syncBuffer, *fakeTime) {
	out := &syncBuffer{}
	inner := slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
	h := New(inner, opt)
	clk := &fakeTime{now: time.Unix(1000, 0)}
	h.st.now = func() time.Time { return clk.now }
	h.st.after = func(d time.Duration, f func()) { clk.timers = append(clk.timers, timer{clk.now.Add(d), f}) }
	return h, out, clk
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRepeatedErrorsSuppressedThenSummarized(t *testing.T) {
	h, out, clk := newTestHandler(Options{Interval: 10 * time.Second, Burst: 3, Keys: []string{"controller"}})
	log := slog.New(h)
	for i := range 10 {
		log.Warn("chip does not answer", "controller", "can0", "try", i)
		if i < 2 {
			log.Warn("chip does not answer", "controller", "can1", "try", i)
		}
		log.Info("retrying", "controller", "can0") // below Warn: never limited
		clk.advance(100 * time.Millisecond)
	}
	var want []string
	for i := range 10 {
		if i < 3 {
			want = append(want, `level=WARN msg="chip does not answer" controller=can0 try=`+string(rune('0'+i)))
		}
		if i < 2 {
			want = append(want, `level=WARN msg="chip does not answer" controller=can1 try=`+string(rune('0'+i)))
		}
		want = append(want, `level=INFO msg=retrying controller=can0`)
	}
	equal(t, "within the interval", out.take(), want)
	clk.advance(9 * time.Second) // the interval is over
	equal(t, "at its end", out.take(), []string{`level=WARN msg="suppressed 7 similar messages" message="chip does not answer" controller=can0 interval=10s`})
	log.Warn("chip does not answer", "controller", "can0", "try", 10)
	equal(t, "the next interval", out.take(), []string{`level=WARN msg="chip does not answer" controller=can0 try=10`})
	clk.advance(time.Minute)
	equal(t, "nothing suppressed, nothing summarized", out.take(), nil)
}

// Key attributes given to a derived handler count too, and the summary goes
// through that handler.
func TestWithAttrsKeysAndFlush(t *testing.T) {
	h, out, _ := newTestHandler(Options{Burst: 1, Keys: []string{"interface"}})
	a := slog.New(h).With("interface", "vcan0")
	b := slog.New(h).With("interface", "vcan1").WithGroup("g")
	for range 3 {
		a.Error("write failed", "err", "ENOBUFS")
		b.Error("write failed", "err", "ENOBUFS")
	}
	equal(t, "one of each", out.take(), []string{
		`level=ERROR msg="write failed" interface=vcan0 err=ENOBUFS`,
		`level=ERROR msg="write failed" interface=vcan1 g.err=ENOBUFS`,
	})
	h.Flush()
	got := out.take()
	equal(t, "flushed at exit", got, []string{
		`level=ERROR msg="suppressed 2 similar messages" interface=vcan0 message="write failed" interval=10s`,
		`level=ERROR msg="suppressed 2 similar messages" interface=vcan1 g.message="write failed" g.interval=10s`,
	})
}

func TestDefaults(t *testing.T) {
	h := New(slog.DiscardHandler, Options{})
	if h.st.opt.Interval != 10*time.Second || h.st.opt.Burst != 5 || h.st.opt.Level.Level() != slog.LevelWarn {
		t.Fatalf("defaults %+v", h.st.opt)
	}
}
