package daemon

import (
	"cand/bridge"
	"cand/config"
	"cand/internal/rt"
)

// delivery is the delivery thread realtime.delivery asks for on this board, or
// nil: the owner thread writes the frames after each drain. auto takes a thread
// where the board has more than one core: on one core it would only take turns
// with the owner.
func (w *wiring) delivery() *bridge.Delivery {
	rc := &w.cfg.Realtime
	cores := w.hw.cores()
	switch {
	case rc.Delivery == config.DeliveryOwner:
		w.log.Info("received frames are written by the owner thread after each drain (realtime.delivery: owner)")
		return nil
	case rc.Delivery == config.DeliveryInline:
		w.log.Warn("received frames are written by the owner thread as soon as each is read, the chip waiting meanwhile (realtime.delivery: inline, for comparison only)")
		return nil
	case rc.Delivery == config.DeliveryAuto && cores < 2:
		w.log.Info("received frames are written by the owner thread after each drain: the board has one core (realtime.delivery: auto)")
		return nil
	case cores < 2:
		w.log.Warn("realtime.delivery: thread on a one-core board: the delivery thread shares the owner thread's core; auto or owner avoids the hand-off", "cores", cores)
	}
	d := &bridge.Delivery{SpinNs: bridge.DefaultSpinNs}
	cfg := rtConfig(w.cfg)
	cfg.Thread, cfg.CPUKey = "delivery thread", "realtime.delivery_cpu"
	cfg.CPU, cfg.Mlockall = rc.DeliveryCPU, false
	cfg.Priority = max(rc.Priority-1, 0) // below the owner: the chip comes first
	d.Setup = func() error {
		report, err := rt.Setup(cfg)
		w.threads.delivery.Store(int64(report.Tid))
		for _, it := range report.Items {
			switch {
			case it.Err == nil:
				w.log.Info(it.Line)
			case err == nil:
				w.log.Warn(it.Line)
			}
		}
		return err
	}
	w.hw.paceDelivery(d)
	w.log.Info("received frames are written by a delivery thread", "cores", cores, "spin", d.SpinNs, "paced", d.Pacer != nil)
	return d
}
