// Package bench is cand's benchmark: the whole pipeline — owner thread,
// MCP2515 driver, SPI engine, socket — on the virtual Pi at a chosen bitrate and
// bus load, and the SPI engine alone polling-first against sleeping for every
// transfer. `cand bench` and `make bench` run it; package bench/report prints
// its Markdown tables and writes its JSON file and SVG histogram.
//
// Besides the classic scenarios (one peer of 8-byte counter frames) it runs the
// workloads of a real bus, each also driven the kernel mcp251x driver's way
// (package kernelref), and on a real board what needs no bus (loopback mode and
// the SPI engine with the MCP2515 answering).
//
// Files:
//   - suite.go: the scenarios of a run, Run;
//   - pipeline.go: Scenario, RunScenario (a scenario on the virtual Pi), the
//     measured window's counters, the stages, the board's clock;
//   - observer.go: the watchers of a window (Observer): the owner thread's busy
//     fraction (its ID asked of the daemon, daemon.Threads), its heartbeat, and
//     those a caller adds (the post-mortem);
//   - harness.go: the daemon in-process with socketpairs (internal/inproc);
//   - streams.go: the TX writer and the reader counting every sender's frames
//     (internal/seqcheck);
//   - traffic.go: the workload's figures from the window;
//   - result.go: the report's schema (Report, ScenarioResult, ClockResult, ...);
//   - workload.go, workloads.go, workload_fieldcheck.go: the workloads, the
//     field check;
//   - kernel.go: a workload the kernel driver's way (package kernelref);
//   - burst.go: the burst scenarios against the reference's 3 messages / 7
//     transfers;
//   - board.go: a real board (loopback scenarios, the SPI engine answered by
//     the MCP2515);
//   - stress.go: stress-ng on the other core;
//   - targets.go: cand's goals, met or missed in a run.
//
// Beside it: bench/report (tables, SVG, the JSON file), bench/check (a run
// against a baseline report), bench/transfer (the SPI engine polling-first
// against sleeping), bench/envelope (the highest lossless load per
// board, bitrate and frame length), bench/postmortem (an envelope step's first
// loss explained; linked into cand only with -tags postmortem), bench/kernelref
// (the kernel driver's way).
//
// Everything runs in one process: the figures for CPU time and allocations per
// frame include the simulator's own work (bus, chip model, peers) and the
// benchmark's socket reader, so they are upper bounds for the daemon alone.
package bench
