package metrics

import "testing"

// The simulated peers' own drops are exported per controller and peer, read at
// each scrape.
func TestSimPeersExposition(t *testing.T) {
	r := New("test")
	n := uint64(0)
	r.AddSimPeers(func() []SimPeer {
		n++
		return []SimPeer{{Controller: "sim0", Peer: "flood", Dropped: n}, {Controller: "sim1", Peer: "echo"}}
	})
	secondScrapeHas(t, r,
		`cand_sim_peer_dropped_total{controller="sim0",peer="flood"} 2`,
		`cand_sim_peer_dropped_total{controller="sim1",peer="echo"} 0`,
	)
}
