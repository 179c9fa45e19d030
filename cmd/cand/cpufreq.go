package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"cand/config"
	"cand/hw/cpufreq"
)

// cpufreqUsage is the synopsis of `cand cpufreq`.
const cpufreqUsage = `usage: cand cpufreq hold [-config PATH] [-state PATH] [-sysfs DIR]
       cand cpufreq restore [-state PATH] [-sysfs DIR]
       cand cpufreq show [-state PATH] [-sysfs DIR]`

// runCPUFreq is `cand cpufreq hold|restore|show`: hardware.hold_cpu_clock done by
// a separate process, as root (the packaged unit's ExecStartPre=+ and
// ExecStopPost=+ steps, docs/operations.md): hold raises every cpufreq policy's
// scaling_min_freq to its scaling_max_freq after recording the values found in
// the state file; restore writes them back, also after cand died; show prints
// the policies' limits now.
func runCPUFreq(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, cpufreqUsage)
		return 2
	}
	verb := args[0]
	flags := flag.NewFlagSet("cand cpufreq "+verb, flag.ContinueOnError)
	flags.SetOutput(stderr)
	state := flags.String("state", cpufreq.DefaultState, "the state file: the values from before the hold")
	dir := flags.String("sysfs", cpufreq.DefaultDir, "the kernel's cpufreq directory")
	var path *string
	switch verb {
	case "hold":
		path = flags.String("config", "/etc/cand/cand.yaml", "configuration file (YAML): hold only with backend bcm2835 and hardware.hold_cpu_clock true")
	case "restore", "show":
	default:
		fmt.Fprintf(stderr, "cand cpufreq: unknown command %q\n%s\n", verb, cpufreqUsage)
		return 2
	}
	if err := flags.Parse(args[1:]); err != nil {
		return 2
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "cand cpufreq %s: unexpected argument %q\n%s\n", verb, flags.Arg(0), cpufreqUsage)
		return 2
	}
	sys := cpufreq.New(*dir)
	switch verb {
	case "hold":
		return cpufreqHold(sys, *path, *state, stdout, stderr)
	case "restore":
		return cpufreqRestore(sys, *state, stdout, stderr)
	}
	return cpufreqShow(sys, *state, stdout, stderr)
}

// cpufreqHold holds the clock if the configuration asks for it. A kernel without
// cpufreq is no failure: the clock is not held, and cand runs on.
func cpufreqHold(sys cpufreq.Sysfs, path, state string, stdout, stderr io.Writer) int {
	cfg, err := config.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	switch h := cfg.Hardware; {
	case h.Backend != config.BackendBCM2835:
		fmt.Fprintf(stdout, "cand cpufreq hold: %s: backend %s: the virtual Pi plays hardware.hold_cpu_clock itself; the CPU clock is left alone\n", path, h.Backend)
		return 0
	case !h.HoldCPUClock:
		fmt.Fprintf(stdout, "cand cpufreq hold: %s: hardware.hold_cpu_clock is false: the CPU clock is left to its governor\n", path)
		if _, err := os.Lstat(state); err == nil {
			fmt.Fprintf(stdout, "cand cpufreq hold: but %s is there: an earlier hold was not restored; cand cpufreq restore -state %s ends it\n", state, state)
		}
		return 0
	}
	held, err := sys.Hold(state)
	if errors.Is(err, cpufreq.ErrNoCpufreq) {
		fmt.Fprintf(stdout, "cand cpufreq hold: %v\n", err)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "cand cpufreq hold: %v\n", err)
		return 1
	}
	held.Close()
	for _, p := range held.Found {
		fmt.Fprintf(stdout, "cand cpufreq hold: %s (CPUs %s): scaling_min_freq %d -> %d kHz\n", p.Name, p.CPUs, p.MinKHz, p.MaxKHz)
	}
	if held.Kept {
		fmt.Fprintf(stdout, "cand cpufreq hold: %s was there from an earlier hold that was not restored; kept: it holds the values from before that hold\n", state)
	} else {
		fmt.Fprintf(stdout, "cand cpufreq hold: the values before are in %s; cand cpufreq restore puts them back\n", state)
	}
	return 0
}

// cpufreqRestore puts back what the state file recorded; without one it does
// nothing and says so.
func cpufreqRestore(sys cpufreq.Sysfs, state string, stdout, stderr io.Writer) int {
	r, err := sys.Restore(state)
	for _, p := range r.Policies {
		fmt.Fprintf(stdout, "cand cpufreq restore: %s: scaling_min_freq back to %d kHz\n", p.Name, p.MinKHz)
	}
	if err != nil {
		fmt.Fprintf(stderr, "cand cpufreq restore: %v\n", err)
		return 1
	}
	if r.NoState {
		fmt.Fprintf(stdout, "cand cpufreq restore: no state file %s: nothing to restore (no hold in force, or restored already)\n", state)
	}
	return 0
}

// cpufreqShow prints each policy's limits and whether a hold's state file is
// there.
func cpufreqShow(sys cpufreq.Sysfs, state string, stdout, stderr io.Writer) int {
	ps, err := sys.Policies()
	if err != nil {
		fmt.Fprintf(stderr, "cand cpufreq show: %v\n", err)
		return 1
	}
	for _, p := range ps {
		how := "scaled by its governor"
		if p.MinKHz == p.MaxKHz {
			how = "held at its maximum"
		}
		fmt.Fprintf(stdout, "%s (CPUs %s): scaling_min_freq %d kHz, scaling_max_freq %d kHz: %s\n", p.Name, p.CPUs, p.MinKHz, p.MaxKHz, how)
	}
	if _, err := os.Lstat(state); err == nil {
		fmt.Fprintf(stdout, "state file %s: a hold is in force (cand cpufreq restore ends it)\n", state)
	} else {
		fmt.Fprintf(stdout, "state file %s: none (no hold by cand cpufreq hold in force)\n", state)
	}
	return 0
}
