package daemon

import (
	"cand/config"
	"cand/internal/rt"
	"cand/metrics"
)

func rtConfig(cfg *config.Config) rt.Config {
	return rt.Config{
		Priority: cfg.Realtime.Priority,
		CPU:      cfg.Realtime.CPU,
		Mlockall: cfg.Realtime.Mlockall == nil || *cfg.Realtime.Mlockall,
		Require:  cfg.Realtime.Required,
	}
}

// realtimeSetting maps a part of rt's setup to the metric's setting.
func realtimeSetting(what string) metrics.RealtimeSetting {
	switch what {
	case rt.Priority:
		return metrics.SchedFIFO
	case rt.Affinity:
		return metrics.CPUAffinity
	case rt.Mlockall:
		return metrics.MemoryLock
	}
	panic("daemon: rt reports a setting cand_realtime_refused does not know: " + what)
}

// setupRealtime gives the calling owner thread its real-time settings. It logs
// each part of the report, a refusal as a warning, and records the refusals in
// cand_realtime_refused. With realtime.required a refusal is the error, which
// names it, instead of a warning. It keeps the thread's ID (Daemon.Threads).
func (w *wiring) setupRealtime(refused *metrics.Realtime) error {
	report, err := rt.Setup(rtConfig(w.cfg))
	w.threads.owner.Store(int64(report.Tid))
	for _, it := range report.Items {
		s := realtimeSetting(it.What)
		refused.SetRefused(s, it.Err != nil)
		if it.What == rt.Mlockall && it.Applied {
			w.memLocked = true
		}
		switch {
		case it.Err == nil:
			w.log.Info(it.Line)
		case err == nil:
			w.log.Warn(it.Line, "setting", s.String())
		}
	}
	return err
}
