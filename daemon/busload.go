package daemon

import (
	"context"
	"sync"
	"time"

	"cand/internal/mono"
	"cand/metrics"
)

// busLoadInterval is how often the bus load is sampled: canbusload's default.
const busLoadInterval = time.Second

// busLoadStep is the longest host sleep between two looks at the board's clock
// while an interval runs: on the virtual Pi the board's time runs at its own
// pace against the host's, so an interval ends at most this much (in host
// time) after its end in the board's.
const busLoadStep = 20 * time.Millisecond

// loadMeter samples every controller's bit-time counters (cand_rx_bit_times_total,
// cand_tx_bit_times_total) every interval of the board's time, in which the bus is
// paced, so that a status request gets the bus load of the last whole interval, as
// canbusload prints it. Until one interval has passed, the load is over the time
// since the first sample.
type loadMeter struct {
	ms  []*metrics.Controller
	now mono.Clock // the board's time

	mu         sync.Mutex
	prev, last loadSample
}

// loadSample is every controller's counters at one moment.
type loadSample struct {
	at     int64 // the board's time (loadMeter.now)
	rx, tx []uint64
}

func newLoadMeter(ms []*metrics.Controller, now mono.Clock) *loadMeter {
	l := &loadMeter{ms: ms, now: now}
	l.last = l.sample()
	l.prev = l.last
	return l
}

func (l *loadMeter) sample() loadSample {
	s := loadSample{at: l.now(), rx: make([]uint64, len(l.ms)), tx: make([]uint64, len(l.ms))}
	for i, m := range l.ms {
		s.rx[i], s.tx[i] = m.RXBits.Load(), m.TXBits.Load()
	}
	return s
}

// run samples every interval of the board's time until ctx is done.
func (l *loadMeter) run(ctx context.Context, interval time.Duration) {
	l.mu.Lock()
	next := l.last.at + int64(interval)
	l.mu.Unlock()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		if left := next - l.now.Now(); left > 0 {
			t.Reset(min(time.Duration(left), busLoadStep))
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			continue
		}
		s := l.sample()
		l.mu.Lock()
		l.prev, l.last = l.last, s
		l.mu.Unlock()
		next = s.at + int64(interval)
	}
}

// load returns controller i's load over the last whole interval.
func (l *loadMeter) load(i int) BusLoad {
	l.mu.Lock()
	from, to := l.prev, l.last
	l.mu.Unlock()
	if to.at == from.at {
		to = l.sample() // the first interval is not over yet
	}
	secs := float64(to.at-from.at) / 1e9
	capacity := float64(l.ms[i].Bitrate.Load()) * secs
	if capacity <= 0 {
		return BusLoad{IntervalSeconds: secs}
	}
	rx := 100 * float64(to.rx[i]-from.rx[i]) / capacity
	tx := 100 * float64(to.tx[i]-from.tx[i]) / capacity
	return BusLoad{IntervalSeconds: secs, RXPercent: rx, TXPercent: tx, TotalPercent: rx + tx}
}
