package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func dump(t *testing.T, lines ...string) []frame {
	t.Helper()
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "(1700000000.%06d) vcan0 %s\n", i, l)
	}
	f, _, err := readDump(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestPeriodic(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		lines []string
		want  string
	}{
		{"0x100:min=3:dlc=8:counter=2", []string{"100#00FF000000000000", "123#00", "100#0100000000000000", "100#0101000000000000"}, ""},
		{"100:min=2:counter=1", []string{"100#FF", "100#00"}, ""}, // wraps
		{"0x100:min=5", []string{"100#00", "100#01"}, "2 frames with IDs 0x100, want at least 5"},
		{"0x100:dlc=8", []string{"100#00"}, "line 1 100#00: DLC 1, want 8"},
		{"0x100:counter=2", []string{"100#0001", "100#0003"},
			"line 2 100#0003: counter 0x3 after 0x1 (line 1 100#0001), want 0x2 (frame lost, repeated or reordered)"},
		{"0x100,0x101:counter=1", []string{"100#05", "101#06", "100#07"}, ""},
		{"0x100,0x101:counter=1:scope=id", []string{"100#05", "101#09", "100#06", "101#0A"}, ""},
		{"0x100,0x101:counter=1", []string{"100#05", "101#09"}, "line 2 101#09: counter 0x9 after 0x5 (line 1 100#05), want 0x6 (frame lost, repeated or reordered)"},
		{"0x100:counter=1:rest=AABB", []string{"100#01AABC"}, "line 1 100#01AABC: bytes after the counter are AABC, want AABB"},
		{"0x100:counter=2", []string{"100#01"}, "line 1 100#01: 1 data bytes cannot hold a 2-byte counter"},
		{"1ABCDEF0:ext:counter=1", []string{"1ABCDEF0#01", "1ABCDEF0#02"}, ""},
	} {
		p, err := parsePeriodic(tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		if got := p.check(dump(t, tc.lines...)); got != tc.want {
			t.Errorf("%s on %v:\n got %q\nwant %q", tc.spec, tc.lines, got, tc.want)
		}
	}
}

func TestParsePeriodicErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"xyz":             `ID "xyz" is not a hex CAN ID`,
		"0x100:dlc=9":     "dlc 9 outside 0..8",
		"0x100:scope=bus": `scope "bus": want set or id`,
		"0x100:foo=1":     `unknown option "foo"`,
	} {
		_, err := parsePeriodic(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to contain %q", spec, err, want)
		}
	}
}

func TestAnswers(t *testing.T) {
	spec := answersSpec{Req: 0x123, Ans: 0x124, N: 3}
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{[]string{"123#01", "124#01", "100#00", "123#02", "123#03", "124#02", "124#03"}, ""},
		{[]string{"123#01", "124#01", "123#02", "124#02"}, "2 requests with ID 0x123 in the dump, want 3 (the sender or candump lost frames)"},
		{[]string{"123#01", "123#02", "123#03", "124#01", "124#02"},
			"2 answers with ID 0x124, want 3: first unanswered is request #3 (line 3 123#03)"},
		{[]string{"123#01", "123#02", "123#03", "124#01", "124#03", "124#02"},
			"answer #2 (line 5 124#03) carries 03, want 02 from request #2 (line 2 123#02); that data is found as answer #3 (line 6): reordered"},
		{[]string{"123#01", "123#02", "123#03", "124#01", "124#07", "124#03"},
			"answer #2 (line 5 124#07) carries 07, want 02 from request #2 (line 2 123#02); that data is not found among the answers: lost or corrupted"},
		{[]string{"124#01", "123#01", "123#02", "123#03", "124#02", "124#03"},
			"answer #1 (line 1 124#01) was received 1 µs before its request (line 2 123#01)"},
		{[]string{"123#01", "123#02", "123#03", "124#01", "124#02", "124#03", "124#03"},
			"4 answers with ID 0x124, want 3: first extra is line 7 124#03"},
	} {
		if _, got := spec.check(dump(t, tc.lines...)); got != tc.want {
			t.Errorf("%v:\n got %q\nwant %q", tc.lines, got, tc.want)
		}
	}
}

func TestAnswersLossy(t *testing.T) {
	spec, err := parseAnswers("0x201:0x200:4:lossy")
	if err != nil || !spec.Lossy {
		t.Fatalf("parse: %+v, %v", spec, err)
	}
	for _, tc := range []struct {
		lines    []string
		answered int
		want     string
	}{
		{[]string{"201#01", "201#02", "201#03", "201#04", "200#01", "200#03", "200#04"}, 3, ""},
		{[]string{"201#01", "201#02", "201#03", "201#04"}, 0, ""},
		{[]string{"201#01", "201#02", "201#03", "201#04", "200#03", "200#02"}, 2,
			"answer #2 (line 6 200#02) carries 02: it is request #2's (line 2), already passed: reordered or repeated"},
		{[]string{"201#01", "201#02", "201#03", "201#04", "200#01", "200#01"}, 2,
			"answer #2 (line 6 200#01) carries 01: it is request #1's (line 1), already passed: reordered or repeated"},
		{[]string{"201#01", "201#02", "201#03", "201#04", "200#09"}, 1,
			"answer #1 (line 5 200#09) carries 09: no request carries it: corrupted or not an answer"},
		{[]string{"200#02", "201#01", "201#02", "201#03", "201#04"}, 1,
			"answer #1 (line 1 200#02) was received 2 µs before its request (line 3 201#02)"},
		{[]string{"201#01", "201#02", "200#01"}, 1, "2 requests with ID 0x201 in the dump, want 4 (the sender or candump lost frames)"},
	} {
		n, got := spec.check(dump(t, tc.lines...))
		if n != tc.answered || got != tc.want {
			t.Errorf("%v:\n got %d, %q\nwant %d, %q", tc.lines, n, got, tc.answered, tc.want)
		}
	}
	if _, err := parseAnswers("0x201:0x200:4:often"); err == nil || !strings.Contains(err.Error(), `unknown option "often" (want ext or lossy)`) {
		t.Errorf("unknown option: %v", err)
	}
}

// tempFile writes body to a file in a fresh temporary directory and returns its path.
func tempFile(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunCheckOutput(t *testing.T) {
	path := tempFile(t, "dump.log", "(1.000000) vcan0 100#0001\n(1.000001) vcan0 123#AA\n(1.000002) vcan0 124#AA\n(1.000003) vcan0 100#0002\n(1.000004) vcan0 20000004#0000000000000000\n")
	var out, errOut strings.Builder
	code := runCheck([]string{"-name", "smoke", "-dump", path, "-periodic", "0x100:min=2:counter=2", "-answers", "0x123:0x124:1", "-no-error-frames"}, &out, &errOut)
	want := "VMTEST PASS smoke/dump\n" +
		"VMTEST PASS smoke/periodic-0x100\n" +
		"VMTEST PASS smoke/answers-0x123\n" +
		"VMTEST FAIL smoke/no-error-frames: line 5 20000004#0000000000000000 is an error frame (class 0x4)\n"
	if code != 1 || out.String() != want {
		t.Fatalf("code %d, output:\n%s\nwant code 1, output:\n%s", code, out.String(), want)
	}

	out.Reset()
	code = runCheck([]string{"-name", "t", "-dump", filepath.Join(t.TempDir(), "missing")}, &out, &errOut)
	if code != 1 || !strings.HasPrefix(out.String(), "VMTEST FAIL t/dump: open ") {
		t.Fatalf("code %d, output %q", code, out.String())
	}
}

func TestRunCheckLedger(t *testing.T) {
	dumpPath := tempFile(t, "dump.log", "(1.000000) vcan0 123#01\n(1.000001) vcan0 122#01\n(1.000002) vcan0 123#02\n"+
		"DROPCOUNT: dropped 1 CAN frame on 'vcan0' socket (total drops 1)\n")
	metricsPath := tempFile(t, "metrics.txt", `cand_tx_frames_total{controller="can0",interface="vcan0"} 2
cand_socket_drops_total{controller="can0",interface="vcan0"} 0
cand_rx_overflows_total{controller="can0",interface="vcan0"} 0
`)
	var out, errOut strings.Builder
	code := runCheck([]string{"-name", "t", "-dump", dumpPath, "-answers", "0x123:0x122:2", "-metrics", metricsPath, "-iface", "vcan0"}, &out, &errOut)
	want := "VMTEST PASS t/dump\n" +
		"vm: t counters vcan0: cand_tx_frames_total 2, cand_socket_drops_total 0, cand_tx_dropped_total (not exported by this cand), " +
		"cand_tx_invalid_total (not exported by this cand), cand_sim_peer_dropped_total (not exported by this cand), " +
		"cand_rx_overflows_total 0, cand_rx_socket_errors_total (not exported by this cand), candump DROPCOUNT 1\n" +
		"VMTEST FAIL t/answers-0x123: 1 answers with ID 0x122, want 2: first unanswered is request #2 (line 3 123#02) " +
		"[counted: no counter moved; candump DROPCOUNT 1]\n" +
		"VMTEST FAIL t/conservation-0x123: 2 offered = 1 answered + 0 counted before the bus (no counter moved) + " +
		"cand_sim_peer_dropped_total (not exported by this cand) + 1 lost after the bus, counted by candump DROPCOUNT 1 " +
		"(counts of all received frames, not only answers)\n"
	if code != 1 || out.String() != want {
		t.Fatalf("code %d, output:\n%s\nwant code 1, output:\n%s", code, out.String(), want)
	}
}

func TestNoErrorFrames(t *testing.T) {
	frames := dump(t, "100#00", "20000004#0004000000000000", "100#01", "20000004#0001000000000000")
	frames[3].Usec += 2_500_000
	want := "line 2 20000004#0004000000000000 is an error frame (class 0x4); 2 error frames, from 0.0 s to 2.5 s into the dump (the last: line 4 20000004#0001000000000000)"
	if got := checkNoErrorFrames(frames); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := checkNoErrorFrames(dump(t, "100#00")); got != "" {
		t.Errorf("no error frame: %q", got)
	}
}

// Without -metrics a failing check still names candump's own drops.
func TestRunCheckDumpDrops(t *testing.T) {
	path := tempFile(t, "dump.log", "(1.000000) vcan0 100#0001\nDROPCOUNT: dropped 1 CAN frame on 'vcan0' socket (total drops 1)\n(1.000002) vcan0 100#0003\n")
	var out, errOut strings.Builder
	code := runCheck([]string{"-name", "smoke", "-dump", path, "-periodic", "0x100:counter=2"}, &out, &errOut)
	want := "VMTEST PASS smoke/dump\n" +
		"VMTEST FAIL smoke/periodic-0x100: line 3 100#0003: counter 0x3 after 0x1 (line 1 100#0001), want 0x2 (frame lost, repeated or reordered) [counted: candump DROPCOUNT 1]\n"
	if code != 1 || out.String() != want {
		t.Fatalf("code %d, output:\n%s\nwant code 1, output:\n%s", code, out.String(), want)
	}
}
