package bench

import (
	"sync/atomic"
	"time"
)

// heartbeatEvery is how often heartbeatWatch samples the owner's heartbeat.
const heartbeatEvery = time.Millisecond

// heartbeatWatch samples the owner thread's heartbeat age (bridge.Owner.HeartbeatAge,
// host CLOCK_MONOTONIC: the time systemd's watchdog runs on) over a window, from
// a goroutine of its own, and keeps the oldest it saw. A sample is at most
// heartbeatEvery late, so an age it misses is at most that much older.
type heartbeatWatch struct {
	age  func() int64
	stop chan struct{}
	done chan struct{}
	most atomic.Int64
}

func (h *heartbeatWatch) begin() {
	if h.age == nil {
		return
	}
	h.stop, h.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(h.done)
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		for {
			if a := h.age(); a > h.most.Load() {
				h.most.Store(a)
			}
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
}

// end stops the sampling and returns the oldest heartbeat age seen, in ms (nil:
// not measured).
func (h *heartbeatWatch) end() *float64 {
	if h.stop == nil {
		return nil
	}
	close(h.stop)
	<-h.done
	h.stop = nil
	ms := float64(h.most.Load()) / 1e6
	return &ms
}
