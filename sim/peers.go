package sim

import (
	"fmt"

	"cand/config"
	"cand/sim/canbus"
)

// newPeers builds a controller's configured peers on bus.
func newPeers(bus *canbus.Bus, sps []config.SimPeer) ([]*canbus.Peer, error) {
	var peers []*canbus.Peer
	for _, sp := range sps {
		spec, err := peerSpec(sp)
		if err != nil {
			return nil, fmt.Errorf("peer %s: %w", sp.Name, err)
		}
		peer, err := canbus.NewPeer(bus, spec)
		if err != nil {
			return nil, fmt.Errorf("peer %s: %w", sp.Name, err)
		}
		peers = append(peers, peer)
	}
	return peers, nil
}

// peerSpec maps the configured peer sp (the YAML schema) to the bus model's own
// description of it, so that sim/canbus does not depend on config.
func peerSpec(sp config.SimPeer) (canbus.PeerSpec, error) {
	var kind canbus.PeerKind
	switch sp.Kind {
	case config.PeerPeriodic:
		kind = canbus.PeerPeriodic
	case config.PeerAnswer:
		kind = canbus.PeerAnswer
	case config.PeerLoad:
		kind = canbus.PeerLoad
	case config.PeerErrors:
		kind = canbus.PeerErrors
	default:
		return canbus.PeerSpec{}, fmt.Errorf("sim peer %q: unknown kind %q: use periodic, answer, load or errors", sp.Name, sp.Kind)
	}
	var payload canbus.PayloadKind
	switch sp.Payload {
	case "", config.PayloadCounter:
		payload = canbus.PayloadCounter
	case config.PayloadStuffMin:
		payload = canbus.PayloadStuffMin
	case config.PayloadStuffMax:
		payload = canbus.PayloadStuffMax
	default:
		return canbus.PeerSpec{}, fmt.Errorf("sim peer %q: unknown payload %q: use counter, stuff-min or stuff-max", sp.Name, sp.Payload)
	}
	return canbus.PeerSpec{
		Kind:        kind,
		Name:        sp.Name,
		IDs:         sp.IDs,
		Extended:    sp.Extended,
		Period:      sp.Period.D(),
		DLC:         sp.DLC,
		IDOffset:    sp.IDOffset,
		LoadPercent: sp.LoadPercent,
		DLCs:        sp.DLCs,
		Remote:      sp.Remote,
		Payload:     payload,
	}, nil
}
