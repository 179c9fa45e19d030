// Command vmcheck verifies a `candump -L` dump taken in the test VM (vm/) against
// expectations given by flags, and prints one line per check:
//
//	VMTEST PASS <name>/<check>
//	VMTEST FAIL <name>/<check>: <reason with the first mismatch>
//
// It exits 0 only if every check passed.
//
//	vmcheck -name test -dump /tmp/dump.log -periodic 0x100:min=5:dlc=8:counter=2 -answers 0x123:0x124:1000 -no-error-frames
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
	var periodic []periodicSpec
	var answers []answersSpec
	fs.Func("periodic", "IDS[:min=N][:dlc=D][:counter=B][:scope=set|id][:rest=HEX][:ext] (repeatable)", func(s string) error {
		p, err := parsePeriodic(s)
		periodic = append(periodic, p)
		return err
	})
	fs.Func("answers", "REQ:ANS:N[:ext]: N requests each answered in order with the same data (repeatable)", func(s string) error {
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
	frames, err := readDump(f)
	f.Close()
	if err != nil {
		report("dump", err.Error())
		return 1
	}
	report("dump", "")
	for _, p := range periodic {
		report(p.name(), p.check(frames))
	}
	for _, a := range answers {
		report(a.name(), a.check(frames))
	}
	if *noErr {
		report("no-error-frames", checkNoErrorFrames(frames))
	}
	if failed > 0 {
		return 1
	}
	return 0
}

func checkNoErrorFrames(frames []frame) string {
	for i := range frames {
		if frames[i].Err {
			return fmt.Sprintf("line %d %s is an error frame (class %#x)", frames[i].Line, frames[i].Text, frames[i].ID)
		}
	}
	return ""
}
