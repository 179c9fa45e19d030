package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"cand/bench"
	"cand/config"
)

// runBench is `cand bench [-quick] [-config FILE] [-out DIR]`: the pipeline and SPI
// engine benchmark of issue 5 on the virtual Pi. It prints the Markdown table on
// stdout, progress on stderr, and the paths of the JSON and SVG it writes.
func runBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cand bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quick := fs.Bool("quick", false, "short scenarios (the whole run under a minute)")
	path := fs.String("config", "deploy/sim.yaml", "configuration whose hardware, realtime and first controller's SPI settings the scenarios use (backend forced to sim)")
	out := fs.String("out", "build/bench", "directory for bench.json and rx_end_to_end.svg")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := config.Load(*path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	base := bench.BaseOf(cfg)
	d := bench.Full
	if *quick {
		d = bench.Quick
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	rep, err := bench.Run(ctx, bench.Suite(d), d.Transfers, &base, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	bench.Markdown(stdout, rep)
	jsonPath, svgPath, err := bench.Write(rep, *out)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "JSON: %s\nSVG:  %s\n", jsonPath, svgPath)
	return 0
}
