package daemon

import (
	"log/slog"

	"cand/config"
	"cand/socketcan"
)

// openInterface opens a raw CAN socket on the controller's interface, creating the
// interface first if it does not exist; undo closes the socket and removes an
// interface it created.
func openInterface(cc *config.Controller, log *slog.Logger) (fd int, undo func(), err error) {
	created, err := socketcan.EnsureLink(cc.Interface.Name, socketcan.Kind(cc.Interface.Kind), cc.Interface.Peer, socketcan.FrameSize)
	if err != nil {
		return -1, nil, err
	}
	if created {
		log.Info("created interface", "interface", cc.Interface.Name, "kind", cc.Interface.Kind)
	}
	s, err := socketcan.Open(cc.Interface.Name, socketcan.Options{RcvBuf: cc.Interface.RcvBuf})
	if err != nil {
		if created {
			socketcan.DeleteLink(cc.Interface.Name)
		}
		return -1, nil, err
	}
	for _, w := range s.Warnings() {
		log.Warn(w.Error(), "interface", cc.Interface.Name)
	}
	return s.Fd(), func() {
		s.Close()
		if created {
			if err := socketcan.DeleteLink(cc.Interface.Name); err != nil {
				log.Warn("removing interface", "interface", cc.Interface.Name, "err", err)
			} else {
				log.Info("removed interface", "interface", cc.Interface.Name)
			}
		}
	}, nil
}
