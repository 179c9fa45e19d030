// Package metrics records cand's per-stage latencies and counters on the frame path
// and exports them to Prometheus.
//
// Recording and exporting are split. The owner thread records into Histogram,
// Counter and Gauge values: plain atomics, no lock, no allocation, no system call.
// The HTTP scrape reads those atomics concurrently and builds Prometheus metrics
// only then, through one prometheus.Collector per controller. client_golang's own
// Histogram.Observe is never called on the frame path: its native-histogram buckets
// live in a sync.Map that allocates the first time a bucket is hit.
//
// Every latency histogram uses the native-histogram schema 3 (bucket factor
// 2^(1/8) ≈ 1.09, what client_golang makes of a requested factor of 1.1) over the
// whole int64 nanosecond range, so every observation lands in its exact bucket and
// no overflow bucket is needed. One exported metric carries both the native buckets
// and classic cumulative buckets at every fourth schema-3 boundary (powers of √2
// from 2^-20 s ≈ 0.95 µs to 2^-6.5 s ≈ 11 ms): Prometheus servers without native
// histograms read the classic ones from the text format, servers with them read
// the native ones from the protobuf format.
//
// Metric names carry the cand_ prefix and base units (seconds, bytes, hertz);
// labels are controller, interface, stage, kind and completion, never a CAN ID.
package metrics
