package metrics

import "testing"

// The delivery thread's counts are exported as they are at each scrape, without
// the controller labels (one thread serves every controller).
func TestDeliveryExposition(t *testing.T) {
	r := New("test")
	n := uint64(0)
	r.AddDelivery(func() Delivery {
		n++
		return Delivery{Wakes: n, Parks: 2 * n, Batches: 3, Frames: 40, Isolated: 5}
	})
	secondScrapeHas(t, r,
		"cand_delivery_wakes_total 2",
		"cand_delivery_parks_total 4",
		"cand_delivery_batches_total 3",
		"cand_delivery_frames_total 40",
		"cand_delivery_isolated_total 5",
		"# TYPE cand_delivery_frames_total counter",
	)
}
