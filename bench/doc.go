// Package bench is cand's benchmark: the whole pipeline — owner thread,
// MCP2515 driver, SPI engine, socket — on the virtual Pi at a chosen bitrate and
// bus load, and the SPI engine alone polling-first against sleeping for every
// transfer. It reports a Markdown table, a JSON file and an SVG histogram of the
// RX end-to-end latency. `cand bench` and `make bench` run it.
//
// Everything runs in one process: the figures for CPU time and allocations per
// frame include the simulator's own work (bus, chip model, peers) and the
// benchmark's socket reader, so they are upper bounds for the daemon alone.
package bench
