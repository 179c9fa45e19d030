package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"cand/bench"
	"cand/bench/check"
	"cand/bench/envelope"
	"cand/bench/report"
	"cand/config"
)

// runBench is `cand bench [-quick] [-run REGEXP] [-config FILE] [-out DIR]
// [-loopback] [-check BASELINE [-tolerance PCT]]`, or `cand bench -envelope
// [-step DURATION] [-full-steps] [-fresh] [-boards LIST] [-bitrates LIST]
// [-lengths LIST] [-postmortem] [-config FILE] [-out DIR]`: the pipeline and SPI engine
// benchmark (package bench), on the virtual Pi, or with -loopback what needs no
// bus on the board the configuration names (a real Pi with hardware.backend:
// bcm2835). It prints the Markdown tables on stdout, progress on stderr, and the
// paths of the JSON and SVG it writes; with -check it compares the run with a
// baseline report and exits 1 if a scenario got worse; with -envelope it finds
// the highest lossless bus load per board, bitrate and frame length
// (package bench/envelope), resuming DIR/envelope.json; -postmortem needs a
// cand built with -tags postmortem (postmortem_on.go).
func runBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cand bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quick := fs.Bool("quick", false, "short scenarios (a quick run of the whole suite)")
	path := fs.String("config", "deploy/sim.yaml", "configuration whose hardware, realtime and first controller's SPI settings the scenarios use (backend forced to sim, unless -loopback)")
	out := fs.String("out", "build/bench", "directory for bench.json and rx_end_to_end.svg")
	run := fs.String("run", "", "run only the scenarios whose name matches this regular expression (and no SPI engine comparison)")
	loopback := fs.Bool("loopback", false, "run only what needs no bus, on the configured board: the SPI engine with the MCP2515 answering, and the pipeline with the controller in loopback mode (on a real Pi: hardware.backend bcm2835, as root, cand not running)")
	baselinePath := fs.String("check", "", "compare the run with this baseline report (a bench.json) and exit 1 if a scenario got worse")
	tol := fs.Float64("tolerance", check.DefaultTolerance.Percent, "with -check: how many percent a stage's p50 may grow (plus 5 µs) before it counts as worse")
	envelopeRun := fs.Bool("envelope", false, "find the highest bus load without a lost frame per board, bitrate and frame length (strict rule; resumes OUT/envelope.json)")
	step := fs.Duration("step", envelope.StepDefault, "with -envelope: each load step's measured window")
	full := fs.Bool("full-steps", false, "with -envelope: run a failing step for its whole window (its loss over the step) instead of stopping it at its first loss (up to twice the time)")
	fresh := fs.Bool("fresh", false, "with -envelope: start over instead of resuming the cells already in OUT/envelope.json")
	boards := fs.String("boards", "", "with -envelope: only these board profiles, comma-separated (default pi-zero,pi3,pi4)")
	bitrates := fs.String("bitrates", "", "with -envelope: only these bitrates in bit/s, comma-separated (default 125000,250000,500000,1000000)")
	lengths := fs.String("lengths", "", "with -envelope: only these frame lengths, comma-separated (default dlc0,dlc8,mix)")
	warmUp := fs.Duration("warmup", 0, "run each scenario's traffic this long before its measured window opens, its frames not counted (default 0: the window opens when cand is ready)")
	postmortem := fs.Bool("postmortem", false, "with -envelope: record what the owner thread and the board's clock did before each failing step's first loss (first_loss in the JSON, a line on stderr); needs a cand built with -tags postmortem")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := config.Load(*path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if *envelopeRun {
		o := envelope.Options{Step: *step, Config: *path, Commit: version,
			Out: filepath.Join(*out, envelope.FileName), Fresh: *fresh, FullSteps: *full}
		if *postmortem {
			if o.PostMortem = postMortem(); o.PostMortem == nil {
				fmt.Fprintln(stderr, "cand bench: -postmortem: this cand is built without the post-mortem; build it with `go build -tags postmortem -o build/cand ./cmd/cand`")
				return 2
			}
		}
		if o.Boards, err = envelope.ParseBoards(*boards); err == nil {
			if o.Bitrates, err = envelope.ParseBitrates(*bitrates); err == nil {
				o.Lengths, err = envelope.ParseLengths(*lengths)
			}
		}
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		return runEnvelope(cfg, o, stdout, stderr)
	}
	if cfg.Hardware.Backend == config.BackendBCM2835 && !*loopback {
		fmt.Fprintf(stderr, "cand bench: %s has hardware.backend bcm2835: on a real board only what needs no bus runs; add -loopback\n", *path)
		return 2
	}
	var baseline *bench.Report
	if *baselinePath != "" {
		if baseline, err = report.Read(*baselinePath); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	board, err := bench.DetectBoard(cfg)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	d := bench.Full
	if *quick {
		d = bench.Quick
	}
	base := bench.BaseOf(cfg)
	suite, transfers := bench.Suite(d), d.Transfers
	if *loopback {
		base = bench.BoardBaseOf(cfg)
		suite = bench.BoardSuite(d)
	}
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
	for i := range suite {
		suite[i].WarmUp = *warmUp
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(stderr, "bench: on %s (%s)\n", board.Model, board.SoC)
	var rep *bench.Report
	if *loopback {
		rep, err = bench.RunBoard(ctx, cfg, suite, transfers, &base, stderr)
	} else {
		rep, err = bench.Run(ctx, suite, transfers, &base, stderr)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	rep.Board = &board
	report.Markdown(stdout, rep)
	jsonPath, svgPath, err := report.Write(rep, *out)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "JSON: %s\nSVG:  %s\n", jsonPath, svgPath)
	if baseline != nil {
		t := check.Tolerance{Percent: *tol, AbsUs: check.DefaultTolerance.AbsUs}
		worse, notes := check.Compare(baseline, rep, t)
		fmt.Fprintln(stdout)
		check.Write(stdout, *baselinePath, worse, notes, t)
		if len(worse) > 0 {
			return 1
		}
	}
	return 0
}

// runEnvelope is `cand bench -envelope`: the table on stdout once the run ends
// (also when interrupted: the cells done so far, marked partial).
func runEnvelope(cfg *config.Config, o envelope.Options, stdout, stderr io.Writer) int {
	if o.Step <= 0 {
		fmt.Fprintf(stderr, "cand bench: -step %v: give a positive duration, e.g. 20s\n", o.Step)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	f, err := envelope.Run(ctx, cfg, o, stderr)
	if f != nil {
		envelope.Markdown(stdout, f)
		if o.PostMortem != nil {
			fmt.Fprintln(stdout)
			if merr := postMortemMarkdown(stdout, f); merr != nil && err == nil {
				err = merr
			}
		}
		fmt.Fprintf(stdout, "JSON: %s\n", o.Out)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
