// Command cand bridges MCP2515 CAN controllers on a Raspberry Pi's SPI0 (or on the
// virtual Pi) to SocketCAN interfaces, and exports per-stage latency metrics.
//
//	cand -config /etc/cand/cand.yaml
//	cand -config deploy/sim.yaml -check-config
//	cand bench -quick
//	cand soak -time 30m
//	cand status [-json]
//	cand cpufreq hold|restore|show
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"cand/config"
	"cand/daemon"
	"cand/internal/journal"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "bench" {
		return runBench(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "soak" {
		return runSoak(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "status" {
		return runStatus(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "cpufreq" {
		return runCPUFreq(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("cand", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "/etc/cand/cand.yaml", "configuration file (YAML)")
	check := fs.Bool("check-config", false, "validate the configuration, print each controller's bit timing, and exit (0 = valid, 1 = invalid)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	verbose := fs.Bool("v", false, "debug logging")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *showVersion {
		fmt.Fprintf(stdout, "cand %s\n", version)
		return 0
	}
	cfg, err := config.Load(*path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if *check {
		lines, err := daemon.CheckConfig(cfg)
		for _, w := range cfg.Warnings {
			fmt.Fprintf(stderr, "%s: warning: %s\n", *path, w)
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", *path, err)
			return 1
		}
		for _, l := range lines {
			fmt.Fprintln(stdout, l)
		}
		fmt.Fprintf(stdout, "%s: ok\n", *path)
		return 0
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log, logDone := logger(stderr, level, journal.SocketPath)
	defer logDone()
	for _, w := range cfg.Warnings {
		log.Warn(w, "config", *path)
	}
	rl := &reloader{log: log}
	ctx, stop := signals(log, rl.reload)
	defer stop()
	opt := daemon.Options{Version: version, Log: log, DropPrivileges: true, ConfigPath: *path, Ready: rl.ready}
	if err := daemon.Run(ctx, cfg, opt); err != nil && !errors.Is(err, context.Canceled) {
		log.Error(err.Error())
		return 1
	}
	return 0
}
