package bench

import "runtime/metrics"

// heapAllocs is the heap objects allocated so far, tiny ones included
// (runtime.MemStats.Mallocs), read through runtime/metrics: ReadMemStats stops
// the world, which parks the owner thread at the factor's park cost, the
// benchmark's own stall charged to cand in the window it measures.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/tiny/allocs:objects"}}
	metrics.Read(s)
	var n uint64
	for _, v := range s {
		if v.Value.Kind() == metrics.KindUint64 {
			n += v.Value.Uint64()
		}
	}
	return n
}
