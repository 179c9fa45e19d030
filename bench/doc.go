// Package bench is cand's benchmark: the whole pipeline — owner thread,
// MCP2515 driver, SPI engine, socket — on the virtual Pi at a chosen bitrate and
// bus load, and the SPI engine alone polling-first against sleeping for every
// transfer. It reports a Markdown table, a JSON file and an SVG histogram of the
// RX end-to-end latency. `cand bench` and `make bench` run it.
//
// Besides the classic scenarios (one peer of 8-byte counter frames) it runs the
// workloads of a real bus (workload.go, workloads.go), each also driven the
// kernel mcp251x driver's way (kernel.go, package kernelref); on a real board,
// what needs no bus (board.go: loopback mode and the SPI engine with the MCP2515
// answering); and it compares a run with a baseline report (check.go).
//
// Files: suite.go (the scenarios, Run, Write), pipeline.go (a scenario on the
// virtual Pi), harness.go (the daemon in-process, internal/inproc), streams.go
// (the measured window: the TX writer and the reader counting every sender's
// frames, internal/seqcheck), traffic.go (the workload figures), ownertid.go (the owner thread's
// busy fraction), burst.go, stress.go, transfer.go, targets.go, result.go,
// markdown.go and markdown_workload.go, svg.go.
//
// Everything runs in one process: the figures for CPU time and allocations per
// frame include the simulator's own work (bus, chip model, peers) and the
// benchmark's socket reader, so they are upper bounds for the daemon alone.
package bench
