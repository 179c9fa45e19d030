package daemon

import (
	"cand/config"
	"cand/socketcan"
)

// Netdevs is how the daemon makes, opens, takes down and removes its SocketCAN
// interfaces: the running kernel's (rtnetlink and AF_CAN, kernelNetdevs) unless
// Options.Netdevs stands in for it (tests, with no kernel CAN support).
type Netdevs interface {
	// Ensure makes the link (a vxcan pair: both ends) exist, classic-CAN MTU, up;
	// created says whether it was made now (socketcan.Ensure).
	Ensure(spec socketcan.LinkSpec) (created bool, err error)
	// Open opens the raw CAN socket cand bridges on interface name.
	Open(name string, opt socketcan.Options) (CANSocket, error)
	// TakeDown clears IFF_UP: the link stays, refusing writes (socketcan.TakeDown).
	TakeDown(spec socketcan.LinkSpec) error
	// Delete removes interface name (a vxcan pair goes with either end).
	Delete(name string) error
}

// CANSocket is an open raw CAN socket (*socketcan.Socket).
type CANSocket interface {
	Fd() int
	Warnings() []error
	Close() error
}

var _ CANSocket = (*socketcan.Socket)(nil)

// kernelNetdevs is Netdevs on the running kernel.
type kernelNetdevs struct{}

func (kernelNetdevs) Ensure(spec socketcan.LinkSpec) (bool, error) { return socketcan.Ensure(spec) }
func (kernelNetdevs) TakeDown(spec socketcan.LinkSpec) error       { return socketcan.TakeDown(spec) }
func (kernelNetdevs) Delete(name string) error                     { return socketcan.DeleteLink(name) }

func (kernelNetdevs) Open(name string, opt socketcan.Options) (CANSocket, error) {
	s, err := socketcan.Open(name, opt)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (w *wiring) netdevs() Netdevs {
	if w.opt.Netdevs != nil {
		return w.opt.Netdevs
	}
	return kernelNetdevs{}
}

// linkSpec is the link controller cc bridges to. A vcan is one interface,
// interface.name. A vxcan pair has cand's end, interface.peer, which cand
// opens, and the applications' end, interface.name, created in interface.netns
// if one is given.
func linkSpec(cc *config.Controller) socketcan.LinkSpec {
	in := &cc.Interface
	spec := socketcan.LinkSpec{Name: in.Name, Kind: socketcan.Kind(in.Kind), MTU: socketcan.CAN_MTU}
	if in.Kind == config.KindVXCAN {
		spec.Name, spec.Peer = in.Peer, in.Name
		spec.PeerNetNS = socketcan.NetNS{Path: in.NetNS.Path, PID: in.NetNS.PID}
	}
	return spec
}

// followedName is the interface whose link state is controller cc's: the one
// applications use (`ip link set can0 down` holds the controller off the bus),
// or, when that is in another network namespace, cand's end of the pair.
func followedName(cc *config.Controller) string {
	if in := &cc.Interface; in.Kind == config.KindVXCAN && !in.NetNS.IsZero() {
		return in.Peer
	}
	return cc.Interface.Name
}
