// Package report renders and stores a benchmark report (bench.Report): the
// Markdown tables `cand bench` prints (markdown.go: pipeline, stages, clock,
// transfers, targets, bursts; workload.go: workloads, ports, the kernel
// driver's way), the SVG histogram of the RX end-to-end latency (svg.go), and
// the report's JSON file, written and read back (file.go).
package report
