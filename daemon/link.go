package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sys/unix"

	"cand/bridge"
	"cand/config"
	"cand/socketcan"
)

// Links is how the daemon follows its interfaces: the kernel's link messages
// (rtnetlink, kernelLinks) or, in tests, a stand-in (Options.Links). An event only
// says that an interface changed; the daemon then asks for its state, so an event
// that is older than the state (one queued while cand recreated the interface) does
// no harm.
type Links interface {
	// Watch calls fn for each link message until ctx is done; it starts with one
	// per existing interface.
	Watch(ctx context.Context, fn func(socketcan.LinkEvent)) error
	// State is controller i's interface now.
	State(i int) (bridge.LinkState, error)
	// Recreate makes controller i's deleted interface again and returns a new
	// socket bound to it; the owner thread puts it in place of the old one.
	Recreate(i int) (fd int, err error)
}

// kernelLinks is Links on the running kernel, for the interfaces cand opened.
type kernelLinks struct {
	cfg    *config.Config
	log    *slog.Logger
	nd     Netdevs
	slcans map[int]*slcanPort // a slcan controller's link is its netdev's open state
}

func (k kernelLinks) Watch(ctx context.Context, fn func(socketcan.LinkEvent)) error {
	w, err := socketcan.WatchLinks()
	if err != nil {
		return err
	}
	defer w.Close()
	return w.Run(ctx, fn)
}

func (k kernelLinks) State(i int) (bridge.LinkState, error) {
	if a := k.slcans[i]; a != nil {
		return a.linkState(), nil
	}
	l, err := socketcan.LinkState(followedName(&k.cfg.Controllers[i]))
	switch {
	case errors.Is(err, unix.ENODEV):
		return bridge.LinkGone, nil
	case err != nil:
		return 0, err
	case l.Up():
		return bridge.LinkUp, nil
	}
	return bridge.LinkDown, nil
}

// Recreate makes the interface again as at start (Ensure: created and up, a vxcan
// pair with its applications' end where it was) and opens a raw CAN socket on
// cand's end with the configured options: a deleted interface leaves its sockets
// unbound for good. At exit it is set down or removed like any other.
func (k kernelLinks) Recreate(i int) (int, error) {
	in := &k.cfg.Controllers[i].Interface
	if in.Kind == config.KindSLCAN {
		return -1, fmt.Errorf("a slcan interface is not made again while cand runs: its pseudo-terminal hung up; restart cand")
	}
	spec := linkSpec(&k.cfg.Controllers[i])
	created, err := k.nd.Ensure(spec)
	if err != nil {
		return -1, err
	}
	if created {
		k.log.Info("created interface again", "interface", in.Name, "kind", in.Kind)
	}
	s, err := k.nd.Open(spec.Name, socketcan.Options{RcvBuf: in.RcvBuf})
	if err != nil {
		return -1, err
	}
	for _, w := range s.Warnings() {
		k.log.Warn(w.Error(), "interface", in.Name)
	}
	return s.Fd(), nil
}

const (
	recreateMin = time.Second
	recreateMax = 30 * time.Second
)

// linkWatch posts each controller's link state to the owner thread as it changes,
// recreates a deleted interface (interface.on_delete: recreate, retried with
// back-off while that fails) or stops cand (exit).
type linkWatch struct {
	w      *wiring
	links  Links
	names  map[string]int
	posted []bridge.LinkState
	lost   []bool          // deleted: the socket must be replaced before bridging again
	retry  []time.Duration // recreate back-off (0: none pending)
	due    []time.Time
}

func newLinkWatch(w *wiring, links Links) *linkWatch {
	n := len(w.cfg.Controllers)
	lw := &linkWatch{w: w, links: links, names: map[string]int{},
		posted: make([]bridge.LinkState, n), lost: make([]bool, n), retry: make([]time.Duration, n), due: make([]time.Time, n)}
	for i := range w.cfg.Controllers {
		if cc := &w.cfg.Controllers[i]; cc.Interface.Kind != config.KindNone {
			lw.names[followedName(cc)] = i // a controller without an interface has no link to follow
		}
	}
	return lw
}

// run follows the links until ctx is done (nil) or cand must stop (the error).
func (lw *linkWatch) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan socketcan.LinkEvent, 64)
	watched := make(chan error, 1)
	go func() {
		watched <- lw.links.Watch(ctx, func(e socketcan.LinkEvent) {
			select {
			case events <- e:
			case <-ctx.Done():
			}
		})
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			<-watched
			return nil
		case err := <-watched:
			if ctx.Err() != nil {
				return nil
			}
			if err == nil {
				err = errors.New("stopped")
			}
			return fmt.Errorf("watching the interfaces' link state: %w", err)
		case e := <-events:
			if i, ok := lw.names[e.Name]; ok {
				if err := lw.sync(i); err != nil {
					return err
				}
			}
		case <-lw.w.slcanKick:
			for i := range lw.w.slcans {
				if err := lw.sync(i); err != nil {
					return err
				}
			}
		case <-timer.C:
		}
		now := time.Now()
		next := time.Hour
		for i := range lw.retry {
			if lw.retry[i] == 0 {
				continue
			}
			if !now.Before(lw.due[i]) {
				if err := lw.sync(i); err != nil {
					return err
				}
			}
			if lw.retry[i] != 0 {
				next = min(next, time.Until(lw.due[i]))
			}
		}
		timer.Reset(max(next, time.Millisecond))
	}
}

// sync asks for controller i's interface state and acts on it.
func (lw *linkWatch) sync(i int) error {
	cc := &lw.w.cfg.Controllers[i]
	st, err := lw.links.State(i)
	if err != nil {
		lw.w.log.Warn("cannot read the interface's link state; asking again", "interface", cc.Interface.Name, "err", err.Error())
		lw.later(i)
		return nil
	}
	if st == bridge.LinkGone {
		if !lw.lost[i] {
			lw.lost[i] = true
			lw.post(i, bridge.LinkGone)
			if cc.Interface.OnDelete == config.OnDeleteExit {
				lw.w.log.Error("interface deleted: stopping cand (interface.on_delete: exit)", "controller", cc.Name, "interface", cc.Interface.Name)
				return fmt.Errorf("interface %s was deleted (interface.on_delete: exit)", cc.Interface.Name)
			}
		}
		// Made again at once, as interface.on_delete: recreate says.
	}
	if lw.lost[i] {
		fd, err := lw.links.Recreate(i)
		if err != nil {
			lw.w.log.Warn("cannot recreate the deleted interface; trying again", "interface", cc.Interface.Name, "err", err.Error(), "in", lw.later(i).String())
			return nil
		}
		lw.lost[i], lw.retry[i] = false, 0
		lw.w.Owner.ReplaceSocket(i, fd)
		lw.w.log.Info("interface recreated; a new socket is bound to it", "controller", cc.Name, "interface", cc.Interface.Name)
		if st, err = lw.links.State(i); err != nil {
			lw.later(i)
			return nil
		}
	}
	lw.retry[i] = 0
	lw.post(i, st)
	return nil
}

// later schedules another sync of controller i, with a doubling back-off.
func (lw *linkWatch) later(i int) time.Duration {
	lw.retry[i] = min(max(2*lw.retry[i], recreateMin), recreateMax)
	lw.due[i] = time.Now().Add(lw.retry[i])
	return lw.retry[i]
}

func (lw *linkWatch) post(i int, st bridge.LinkState) {
	if lw.posted[i] == st {
		return
	}
	lw.posted[i] = st
	lw.w.Owner.SetLink(i, st)
}
