package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"syscall"

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
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	rep, err := soak.Run(ctx, soak.Options{Duration: *d, TXRate: *rate, Seed: *seed, Progress: stderr})
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
