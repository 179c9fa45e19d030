package metrics

import "github.com/prometheus/client_golang/prometheus"

// SimPeer is one simulated peer's own loss: frames it dropped because its transmit
// queue was full (sim/canbus), which never reached the bus.
type SimPeer struct {
	Controller, Peer string
	Dropped          uint64
}

var simPeerDroppedDesc = prometheus.NewDesc("cand_sim_peer_dropped_total",
	"Virtual Pi only: frames a simulated peer dropped because its own transmit queue was full; they never reached the bus.",
	[]string{"controller", "peer"}, nil)

type simPeersCollector struct{ read func() []SimPeer }

var _ prometheus.Collector = simPeersCollector{}

func (c simPeersCollector) Describe(ch chan<- *prometheus.Desc) { ch <- simPeerDroppedDesc }

func (c simPeersCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.read() {
		ch <- prometheus.MustNewConstMetric(simPeerDroppedDesc, prometheus.CounterValue, float64(p.Dropped), p.Controller, p.Peer)
	}
}

// AddSimPeers exports the virtual Pi's peers' own drops, read at each scrape.
func (r *Registry) AddSimPeers(read func() []SimPeer) {
	r.reg.MustRegister(simPeersCollector{read: read})
}
