package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"cand/config"
	"cand/soak"
)

// runSoak is `cand soak [-time D] [-tx-rate N] [-seed N]`: the daemon on the virtual
// Pi at full load with random faults (package soak). It prints progress on stderr
// and the conservation report on stdout; the exit status is 0 for PASS, 1 for FAIL.
func runSoak(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cand soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	d := fs.Duration("time", soak.DefaultDuration, "how long to run")
	rate := fs.Int("tx-rate", 500, "TX frames per second written into cand's socket")
	seed := fs.Uint64("seed", 0, "seed of the fault schedule (0: from the time; the report prints it)")
	rule := fs.String("clock-rule", string(config.SimCPUStrict), "the virtual Pi's clock rule: strict (cand's own time at the board's cost) or dedicated (forgiving)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if r := config.SimCPU(*rule); r != config.SimCPUStrict && r != config.SimCPUDedicated {
		fmt.Fprintf(stderr, "cand soak: -clock-rule %q: use strict or dedicated\n", *rule)
		return 2
	}
	rep, err := soak.Run(ctx, soak.Options{Duration: *d, TXRate: *rate, Seed: *seed, Progress: stderr, Rule: config.SimCPU(*rule)})
	if rep != nil {
		rep.Print(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "cand soak: %v\n", err)
		return 1
	}
	if !rep.Pass() {
		return 1
	}
	return 0
}
