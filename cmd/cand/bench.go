package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"regexp"
	"strings"
	"syscall"

	"cand/bench"
	"cand/config"
)

// runBench is `cand bench [-quick] [-run REGEXP] [-config FILE] [-out DIR]`: the pipeline and SPI
// engine benchmark (package bench) on the virtual Pi. It prints the Markdown table on
// stdout, progress on stderr, and the paths of the JSON and SVG it writes.
func runBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cand bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quick := fs.Bool("quick", false, "short scenarios (the whole run under a minute)")
	path := fs.String("config", "deploy/sim.yaml", "configuration whose hardware, realtime and first controller's SPI settings the scenarios use (backend forced to sim)")
	out := fs.String("out", "build/bench", "directory for bench.json and rx_end_to_end.svg")
	run := fs.String("run", "", "run only the scenarios whose name matches this regular expression (and no SPI engine comparison)")
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
	suite, transfers := bench.Suite(d), d.Transfers
	if *run != "" {
		re, err := regexp.Compile(*run)
		if err != nil {
			fmt.Fprintf(stderr, "cand bench: -run %q: %v\n", *run, err)
			return 2
		}
		var picked []bench.Scenario
		var names []string
		for _, sc := range suite {
			names = append(names, sc.Name)
			if re.MatchString(sc.Name) {
				picked = append(picked, sc)
			}
		}
		if len(picked) == 0 {
			fmt.Fprintf(stderr, "cand bench: -run %q matches no scenario; the scenarios are: %s\n", *run, strings.Join(names, ", "))
			return 2
		}
		suite, transfers = picked, 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	rep, err := bench.Run(ctx, suite, transfers, &base, stderr)
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
