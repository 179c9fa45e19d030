package daemon

import (
	"golang.org/x/sys/unix"

	"cand/config"
	"cand/internal/caps"
)

// A capability cand keeps after set-up, and the run-time duty that needs it.
type keptCap struct {
	c   caps.Cap
	why string
}

// runtimeCaps are the capabilities cand's run needs once everything is set up
// (registers mapped, interfaces made, sockets open and bound, the owner thread
// scheduled): CAP_NET_ADMIN while there are interfaces to set down or remove at
// exit, and CAP_IPC_LOCK while memory is locked for the future
// (mlockall MCL_FUTURE) under a finite RLIMIT_MEMLOCK, since every mapping the
// Go runtime makes afterwards is locked and past the limit that needs the
// capability (mm/mmap.c, mlock_future_ok). CAP_SYS_RAWIO (/dev/mem is open) and
// CAP_SYS_NICE (the owner thread is scheduled) are set-up only.
func runtimeCaps(cfg *config.Config, memLocked, memlockFinite bool) []keptCap {
	var keep []keptCap
	for i := range cfg.Controllers {
		switch cfg.Controllers[i].Interface.Kind {
		case config.KindNone:
			continue
		case config.KindSLCAN:
			keep = append(keep, keptCap{caps.NET_ADMIN, "the slcan interfaces: set down after a bitrate the chip cannot make, and down and up to turn the carrier on after bus-off"})
		default:
			keep = append(keep, keptCap{caps.NET_ADMIN, "the SocketCAN interfaces: set down (or removed) at exit"})
		}
		break
	}
	if memLocked && memlockFinite {
		keep = append(keep, keptCap{caps.IPC_LOCK, "locked memory grows with the process (mlockall MCL_FUTURE) past RLIMIT_MEMLOCK; LimitMEMLOCK=infinity makes it unneeded"})
	}
	return keep
}

// memlockFinite reports whether RLIMIT_MEMLOCK bounds the locked memory.
func memlockFinite() bool {
	var rl unix.Rlimit
	return unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl) != nil || rl.Cur != unix.RLIM_INFINITY
}

// dropPrivileges, with Options.DropPrivileges, drops every capability but
// runtimeCaps from every thread of the process, bounding set included, and logs
// what it kept, why, and what it dropped. A refusal is logged: cand runs on
// with what it has.
func (w *wiring) dropPrivileges() {
	if !w.opt.DropPrivileges {
		return
	}
	kept := runtimeCaps(w.cfg, w.memLocked, memlockFinite())
	var keep caps.Set
	for _, k := range kept {
		keep |= caps.Of(k.c)
	}
	r, err := caps.Keep(keep)
	if err != nil {
		w.log.Warn("privileges: capabilities not dropped", "err", err, "held", r.Before.Permitted.String())
		return
	}
	for _, k := range kept {
		if r.Kept.Has(k.c) {
			w.log.Info("privileges: kept "+k.c.String(), "for", k.why)
		}
	}
	w.log.Info("privileges: dropped every other capability", "dropped", r.Dropped.String(), "kept", r.Kept.String(), "bounding", r.Bounding.String())
	if r.BoundingErr != nil {
		w.log.Info("privileges: bounding set left as it is", "err", r.BoundingErr)
	}
}
