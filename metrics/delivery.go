package metrics

import "github.com/prometheus/client_golang/prometheus"

// Delivery is what the delivery thread (realtime.delivery: thread, or auto on a
// board with more than one core) has done so far: the hand-off from the owner
// thread's RX rings to the sockets (bridge.DeliveryStats).
type Delivery struct {
	Wakes    uint64 // the owner woke the parked thread (at most once per drain)
	Parks    uint64 // the thread parked after spinning with nothing to write
	Batches  uint64 // passes over the rings that wrote records
	Frames   uint64 // records the thread wrote
	Isolated uint64 // records the owner wrote itself while the thread was parked
}

var (
	deliveryWakesDesc = prometheus.NewDesc("cand_delivery_wakes_total",
		"Times the owner thread woke the parked delivery thread: at most once per drain of the chip, so a burst of frames costs one wake-up (docs/monitoring.md).",
		nil, nil)
	deliveryParksDesc = prometheus.NewDesc("cand_delivery_parks_total",
		"Times the delivery thread parked after spinning with no received frame to write (on the virtual Pi also its simulator thread's parks where the board's core would still spin).",
		nil, nil)
	deliveryBatchesDesc = prometheus.NewDesc("cand_delivery_batches_total",
		"Passes of the delivery thread over the RX rings that wrote received frames to the sockets.",
		nil, nil)
	deliveryFramesDesc = prometheus.NewDesc("cand_delivery_frames_total",
		"Received frames and error frames the delivery thread wrote to the sockets.",
		nil, nil)
	deliveryIsolatedDesc = prometheus.NewDesc("cand_delivery_isolated_total",
		"Received frames the owner thread wrote to the socket itself after its drain, each alone in the RX ring while the delivery thread was parked: no wake-up for a lone frame.",
		nil, nil)
)

type deliveryCollector struct{ read func() Delivery }

var _ prometheus.Collector = deliveryCollector{}

// series pairs each of d's counts with its description: the one list Describe
// and Collect read.
func (d Delivery) series() [5]struct {
	desc *prometheus.Desc
	v    uint64
} {
	return [5]struct {
		desc *prometheus.Desc
		v    uint64
	}{{deliveryWakesDesc, d.Wakes}, {deliveryParksDesc, d.Parks}, {deliveryBatchesDesc, d.Batches},
		{deliveryFramesDesc, d.Frames}, {deliveryIsolatedDesc, d.Isolated}}
}

func (c deliveryCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range (Delivery{}).series() {
		ch <- m.desc
	}
}

func (c deliveryCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.read().series() {
		ch <- prometheus.MustNewConstMetric(m.desc, prometheus.CounterValue, float64(m.v))
	}
}

// AddDelivery exports the delivery thread's counts, read at each scrape. Call it
// once per registry, only where a delivery thread runs.
func (r *Registry) AddDelivery(read func() Delivery) {
	r.reg.MustRegister(deliveryCollector{read: read})
}
