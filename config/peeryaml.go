package config

import (
	"fmt"
	"strings"
)

// FlowYAML writes the peer's non-zero fields as the YAML flow mapping an entry of
// sim.peers holds, e.g. {kind: periodic, name: p, ids: [0x123], dlc: 8}: what a
// program that builds a configuration file (a benchmark, a test) writes for it.
// Parse reads it back as the same peer.
func (p SimPeer) FlowYAML() string {
	var keys []string
	add := func(format string, v any) { keys = append(keys, fmt.Sprintf(format, v)) }
	if p.Kind != "" {
		add("kind: %s", p.Kind)
	}
	if p.Name != "" {
		add("name: %s", p.Name)
	}
	if len(p.IDs) > 0 {
		ids := make([]string, len(p.IDs))
		for i, id := range p.IDs {
			ids[i] = fmt.Sprintf("%#x", id)
		}
		add("ids: [%s]", strings.Join(ids, ", "))
	}
	if p.Extended {
		add("extended: %t", true)
	}
	if p.Period != 0 {
		add("period: %s", p.Period.D())
	}
	if p.DLC != nil {
		add("dlc: %d", *p.DLC)
	}
	if p.IDOffset != 0 {
		add("id_offset: %d", p.IDOffset)
	}
	if p.LoadPercent != 0 {
		add("load_percent: %g", p.LoadPercent)
	}
	if len(p.DLCs) > 0 {
		dlcs := make([]string, len(p.DLCs))
		for i, v := range p.DLCs {
			dlcs[i] = fmt.Sprint(v)
		}
		add("dlcs: [%s]", strings.Join(dlcs, ", "))
	}
	if p.Remote {
		add("remote: %t", true)
	}
	if p.Payload != "" {
		add("payload: %s", p.Payload)
	}
	return "{" + strings.Join(keys, ", ") + "}"
}
