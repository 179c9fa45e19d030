package metrics

import (
	"strings"
	"testing"
)

// The simulated peers' own drops are exported per controller and peer, read at
// each scrape.
func TestSimPeersExposition(t *testing.T) {
	r := New("test")
	n := uint64(0)
	r.AddSimPeers(func() []SimPeer {
		n++
		return []SimPeer{{Controller: "sim0", Peer: "flood", Dropped: n}, {Controller: "sim1", Peer: "echo"}}
	})
	scrapeText(t, r.Handler())
	text := scrapeText(t, r.Handler())
	for _, want := range []string{
		`cand_sim_peer_dropped_total{controller="sim0",peer="flood"} 2`,
		`cand_sim_peer_dropped_total{controller="sim1",peer="echo"} 0`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("exposition lacks %q:\n%s", want, text)
		}
	}
}
