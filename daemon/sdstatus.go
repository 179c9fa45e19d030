package daemon

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"cand/canstate"
	"cand/internal/sdnotify"
	"cand/metrics"
)

// sdStatusInterval is how often systemd's STATUS= line is refreshed: what
// `systemctl status cand` shows under "Status:".
const sdStatusInterval = 5 * time.Second

// sdStatus keeps systemd's STATUS= line: per controller its interface, its state
// (as `cand status` names it, or "chip missing") and its RX and TX frame rates
// over the last interval.
type sdStatus struct {
	n  sdnotify.Notifier
	ms []*metrics.Controller

	mu     sync.Mutex // the ticker and a reload both send
	at     time.Time
	rx, tx []uint64
	line   string
}

func newSDStatus(n sdnotify.Notifier, sources []statusSource) *sdStatus {
	s := &sdStatus{n: n, ms: make([]*metrics.Controller, len(sources)),
		rx: make([]uint64, len(sources)), tx: make([]uint64, len(sources))}
	for i := range sources {
		s.ms[i] = sources[i].m
	}
	s.sample(time.Now())
	return s
}

// sample reads the counters at now and returns the line with the rates since
// the last sample (0/s on the first).
func (s *sdStatus) sample(now time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	dt := now.Sub(s.at).Seconds()
	parts := make([]string, len(s.ms))
	for i, m := range s.ms {
		rx, tx := m.RXFrames.Load(), m.TXFrames.Load()
		var rxRate, txRate float64
		if !s.at.IsZero() && dt > 0 {
			rxRate, txRate = float64(rx-s.rx[i])/dt, float64(tx-s.tx[i])/dt
		}
		s.rx[i], s.tx[i] = rx, tx
		parts[i] = controllerLine(m.Interface(), m.ChipUp.Load() == 1, m.LinkUp.Load() == 1,
			canstate.State(m.BusState.Load()), rxRate, txRate)
	}
	s.at = now
	s.line = strings.Join(parts, "; ")
	return s.line
}

// controllerLine is one controller's part of the STATUS= line, e.g.
// "can0 ERROR-ACTIVE rx 812/s tx 3/s".
func controllerLine(iface string, chipUp, linkUp bool, st canstate.State, rx, tx float64) string {
	state := StateName(linkUp, st)
	if !chipUp {
		state = "chip missing"
	}
	return fmt.Sprintf("%s %s rx %.0f/s tx %.0f/s", iface, state, rx, tx)
}

// ready tells systemd cand is ready, with the current line.
func (s *sdStatus) ready() {
	s.mu.Lock()
	line := s.line
	s.mu.Unlock()
	s.n.Send("READY=1\nSTATUS=" + line)
}

// run refreshes the line every sdStatusInterval until ctx ends.
func (s *sdStatus) run(ctx context.Context) {
	if !s.n.Enabled() {
		return
	}
	every(ctx, sdStatusInterval, func() { s.n.Send("STATUS=" + s.sample(time.Now())) })
}
