package daemon

import (
	"context"
	"log/slog"
	"time"

	"cand/sim/soc"
)

// stallBusAfter is hardware.sim_stall_bus_after on the virtual Pi: after d of host
// time the peripheral bus stalls, so the owner thread wedges at its next register
// access and its heartbeat ages (the watchdog then stops WATCHDOG=1). The bus
// resumes when ctx ends, so that a stop still finds the owner thread.
func stallBusAfter(ctx context.Context, s *soc.BusStall, d time.Duration, log *slog.Logger) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return
	case <-t.C:
	}
	log.Warn("virtual Pi: peripheral bus stalled (hardware.sim_stall_bus_after): the owner thread wedges at its next register access", "after", d)
	s.Stall()
	<-ctx.Done()
	s.Resume()
}
