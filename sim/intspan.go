package sim

import "cand/metrics"

// intSpan measures an INT line's low spans in the board's time: from the chip
// asserting INT to the driver's last flag clear releasing it. It is called with
// the bus's lock held.
type intSpan struct {
	fellAt int64 // board time INT fell (0: high)
	h      metrics.Histogram
}

func (s *intSpan) edge(level bool, at int64) {
	switch {
	case !level && s.fellAt == 0:
		s.fellAt = at
	case level && s.fellAt != 0:
		s.h.Observe(at - s.fellAt)
		s.fellAt = 0
	}
}
