// Command vmcheck verifies a `candump -L` dump taken in the test VM (vm/) against
// expectations given by flags, and prints one line per check:
//
//	VMTEST PASS <name>/<check>
//	VMTEST FAIL <name>/<check>: <reason with the first mismatch>
//
// It exits 0 only if every check passed.
//
//	vmcheck -name test -dump /tmp/dump.log -periodic 0x100:min=5:dlc=8:counter=2 -answers 0x123:0x122:1000 -no-error-frames
//
// With -metrics (cand's /metrics saved after the traffic; -metrics-base: saved
// before it) and -iface, each -answers flow also gets a conservation check: the
// frames offered are answered or lost by a cause one of cand's counters names
// (conserve.go), and every failing frame check says which counters moved.
//
// `vmcheck peer` is a stand-in for the simulated bus's peers on a SocketCAN
// interface, so the VM's smoke mode exercises the same checks without cand.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "peer" {
		os.Exit(runPeer(os.Args[2:], os.Stderr))
	}
	os.Exit(runCheck(os.Args[1:], os.Stdout, os.Stderr))
}

// runCheck parses flags, runs the checks and returns the exit code.
func runCheck(args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("vmcheck", flag.ContinueOnError)
	fs.SetOutput(errOut)
	name := fs.String("name", "vm", "prefix of the check names in VMTEST lines")
	dump := fs.String("dump", "", "candump -L output file (required)")
	noErr := fs.Bool("no-error-frames", false, "fail if the dump holds any error frame")
	metricsFile := fs.String("metrics", "", "cand's /metrics as saved after the traffic: adds the conservation checks")
	baseFile := fs.String("metrics-base", "", "cand's /metrics as saved before the traffic (default: counters from cand's start)")
	iface := fs.String("iface", "vcan0", "the interface whose counters -metrics reads")
	var periodic []periodicSpec
	var answers []answersSpec
	fs.Func("periodic", "IDS[:min=N][:dlc=D][:counter=B][:scope=set|id][:rest=HEX][:ext] (repeatable)", func(s string) error {
		p, err := parsePeriodic(s)
		periodic = append(periodic, p)
		return err
	})
	fs.Func("answers", "REQ:ANS:N[:ext][:lossy]: N requests each answered in order with the same data; lossy: some unanswered (repeatable)", func(s string) error {
		a, err := parseAnswers(s)
		answers = append(answers, a)
		return err
	})
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(out, "VMTEST FAIL %s/args: %v\n", *name, err)
		return 2
	}
	if *dump == "" {
		fmt.Fprintf(out, "VMTEST FAIL %s/args: -dump FILE is required\n", *name)
		return 2
	}

	failed := 0
	report := func(check, reason string) {
		if reason == "" {
			fmt.Fprintf(out, "VMTEST PASS %s/%s\n", *name, check)
			return
		}
		failed++
		fmt.Fprintf(out, "VMTEST FAIL %s/%s: %s\n", *name, check, reason)
	}

	f, err := os.Open(*dump)
	if err != nil {
		report("dump", fmt.Sprintf("%v (was candump started?)", err))
		return 1
	}
	frames, drops, err := readDump(f)
	f.Close()
	if err != nil {
		report("dump", err.Error())
		return 1
	}
	report("dump", "")
	var led *ledger
	if *metricsFile != "" {
		l, err := loadLedger(*metricsFile, *baseFile, *iface, drops)
		if err != nil {
			report("metrics", err.Error())
		} else {
			led = &l
			fmt.Fprintf(out, "vm: %s counters %s\n", *name, l)
		}
	}
	// counted adds what cand's counters (or candump's, without -metrics) saw to a
	// failing frame check.
	counted := func(reason string) string {
		switch {
		case reason == "":
			return reason
		case led != nil:
			return fmt.Sprintf("%s [counted: %s; %s]", reason, nonzero(led.TX), nonzero(append(append([]loss{}, led.Peer), led.RX...)))
		case drops > 0:
			return fmt.Sprintf("%s [counted: candump DROPCOUNT %d]", reason, drops)
		}
		return reason
	}
	for _, p := range periodic {
		report(p.name(), counted(p.check(frames)))
	}
	for _, a := range answers {
		n, reason := a.check(frames)
		report(a.name(), counted(reason))
		if led != nil {
			report(fmt.Sprintf("conservation-%#x", a.Req), led.check(a.N, n))
		}
	}
	if *noErr {
		report("no-error-frames", checkNoErrorFrames(frames))
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// checkNoErrorFrames names the first error frame, and when there are more, how
// many and when they came: a burst at the start and losses spread over the run
// have different causes.
func checkNoErrorFrames(frames []frame) string {
	var errs []*frame
	for i := range frames {
		if frames[i].Err {
			errs = append(errs, &frames[i])
		}
	}
	if len(errs) == 0 {
		return ""
	}
	f, l := errs[0], errs[len(errs)-1]
	msg := fmt.Sprintf("line %d %s is an error frame (class %#x)", f.Line, f.Text, f.ID)
	if len(errs) > 1 {
		at := func(x *frame) float64 { return float64(x.Usec-frames[0].Usec) / 1e6 }
		msg += fmt.Sprintf("; %d error frames, from %.1f s to %.1f s into the dump (the last: line %d %s)",
			len(errs), at(f), at(l), l.Line, l.Text)
	}
	return msg
}

func loadLedger(after, before, iface string, dumpDrops int64) (ledger, error) {
	a, err := readScrapeFile(after)
	if err != nil {
		return ledger{}, err
	}
	var b scrape
	if before != "" {
		if b, err = readScrapeFile(before); err != nil {
			return ledger{}, err
		}
	}
	return newLedger(a, b, iface, dumpDrops)
}
