package daemon

import (
	"fmt"
	"net/netip"
	"os"

	"golang.org/x/sys/unix"

	"cand/config"
	"cand/metrics"
	"cand/socketcan"
	"cand/socketcand"
	"cand/socketcand/protocol"
)

// serveSocketcand starts the socketcand server (socketcand.enabled) on every
// controller's bus until Run returns, and sets SocketcandAddr. The owner
// thread's frame path does not change: socketcand reads and writes a socket of
// its own (socketcandFd).
func (w *wiring) serveSocketcand() error {
	sc := &w.cfg.Socketcand
	if !sc.Enabled {
		return nil
	}
	var buses []socketcand.Bus
	var names []string
	for i := range w.cfg.Controllers {
		cc := &w.cfg.Controllers[i]
		fd, err := w.socketcandFd(i, cc)
		if err != nil {
			for _, b := range buses {
				unix.Close(b.Fd)
			}
			return fmt.Errorf("socketcand: controller %s: %w", cc.Name, err)
		}
		buses = append(buses, socketcand.Bus{Name: cc.Interface.Name, Fd: fd, Stats: busStats(w.Owner.Ports[i].M)})
		names = append(names, cc.Interface.Name)
	}
	allow := make([]netip.Prefix, len(sc.Allow))
	for i, a := range sc.Allow {
		allow[i] = a.Prefix
	}
	host, _ := os.Hostname()
	srv, err := socketcand.Start(socketcand.Config{
		Listen:      sc.Listen.String(),
		Allow:       allow,
		MaxClients:  sc.MaxClients,
		Beacon:      sc.Beacon.AddrPort,
		Name:        host,
		Description: "cand " + w.opt.Version,
		Log:         w.log,
	}, buses)
	if err != nil {
		return err
	}
	w.SocketcandAddr = srv.Addr().String()
	w.cleanups = append(w.cleanups, func() { srv.Close() })
	w.log.Info("socketcand listening", "addr", w.SocketcandAddr, "buses", names, "allow", len(allow), "beacon", sc.Beacon.IsValid())
	return nil
}

// socketcandFd is the descriptor socketcand serves controller i's bus on:
// socketcand's end of the socketpair (interface kind none), or a raw CAN
// socket of its own on the controller's interface, which sees what cand
// writes there, error frames included, as candump does.
func (w *wiring) socketcandFd(i int, cc *config.Controller) (int, error) {
	if cc.Interface.Kind == config.KindNone {
		fd, ok := w.pairEnds[i]
		if !ok {
			return -1, fmt.Errorf("no socketpair: the controller's socket was passed in (Options.Sockets)")
		}
		delete(w.pairEnds, i)
		return fd, nil
	}
	s, err := socketcan.Open(cc.Interface.Name, socketcan.Options{RcvBuf: cc.Interface.RcvBuf})
	if err != nil {
		return -1, err
	}
	if err := unix.SetsockoptInt(s.Fd(), unix.SOL_CAN_RAW, unix.CAN_RAW_ERR_FILTER, socketcan.CAN_ERR_MASK); err != nil {
		s.Close()
		return -1, fmt.Errorf("setsockopt CAN_RAW_ERR_FILTER on %s: %w", cc.Interface.Name, err)
	}
	for _, warn := range s.Warnings() {
		w.log.Warn(warn.Error(), "interface", cc.Interface.Name, "for", "socketcand")
	}
	return s.Fd(), nil // socketcand owns the descriptor from here
}

// busStats reads a controller's frame and byte counters for "< stat ... >".
func busStats(m *metrics.Controller) func() protocol.Stat {
	return func() protocol.Stat {
		return protocol.Stat{RXBytes: m.RXBytes.Load(), RXFrames: m.RXFrames.Load(), TXBytes: m.TXBytes.Load(), TXFrames: m.TXFrames.Load()}
	}
}
