package daemon

import (
	"errors"
	"log/slog"

	"golang.org/x/sys/unix"

	"cand/bridge"
	"cand/config"
	"cand/socketcan"
)

// iface is a controller's SocketCAN interface and the raw CAN socket cand holds
// on it. The socket's descriptor stays the one the owner thread uses for the whole
// run: once the interface was deleted and made again, the owner thread puts a new
// socket in the old one's place (bridge.Owner.ReplaceSocket).
type iface struct {
	cc      *config.Controller
	log     *slog.Logger
	sock    *socketcan.Socket
	created bool // cand created the interface: it removes it at exit
}

// openIface opens a raw CAN socket on the controller's interface, creating the
// interface first if it does not exist.
func openIface(cc *config.Controller, log *slog.Logger) (*iface, error) {
	f := &iface{cc: cc, log: log}
	if err := f.ensure(); err != nil {
		return nil, err
	}
	s, err := f.open()
	if err != nil {
		if f.created {
			socketcan.DeleteLink(cc.Interface.Name)
		}
		return nil, err
	}
	f.sock = s
	return f, nil
}

// ensure creates the interface if it does not exist, and brings it up.
func (f *iface) ensure() error {
	in := &f.cc.Interface
	created, err := socketcan.EnsureLink(in.Name, socketcan.Kind(in.Kind), in.Peer, socketcan.FrameSize)
	if err != nil {
		return err
	}
	if created {
		f.created = true
		f.log.Info("created interface", "interface", in.Name, "kind", in.Kind)
	}
	return nil
}

func (f *iface) open() (*socketcan.Socket, error) {
	s, err := socketcan.Open(f.cc.Interface.Name, socketcan.Options{RcvBuf: f.cc.Interface.RcvBuf})
	if err != nil {
		return nil, err
	}
	for _, w := range s.Warnings() {
		f.log.Warn(w.Error(), "interface", f.cc.Interface.Name)
	}
	return s, nil
}

// recreate makes a deleted interface again and returns a new socket bound to it,
// for the owner thread to put where the old one was: a deleted interface leaves
// its sockets unbound for good. The caller owns the descriptor.
func (f *iface) recreate() (fd int, err error) {
	if err := f.ensure(); err != nil {
		return -1, err
	}
	s, err := f.open()
	if err != nil {
		return -1, err
	}
	return s.Fd(), nil
}

// close closes the socket and removes the interface if cand created it.
func (f *iface) close() {
	f.sock.Close()
	if !f.created {
		return
	}
	name := f.cc.Interface.Name
	switch err := socketcan.DeleteLink(name); {
	case errors.Is(err, unix.ENODEV):
		f.log.Info("interface already gone", "interface", name)
	case err != nil:
		f.log.Warn("removing interface", "interface", name, "err", err)
	default:
		f.log.Info("removed interface", "interface", name)
	}
}

// state is the interface's link now, as the owner thread acts on it.
func (f *iface) state() (bridge.LinkState, error) {
	l, err := socketcan.LinkState(f.cc.Interface.Name)
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
