package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cand.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runCand(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// -check-config rejects an unknown key and a bitrate of 0 with exit status 1 and a
// message naming the file, the line and the key.
func TestCheckConfigRejects(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       string // after the file name
	}{
		{"unknown key", "controllers:\n  - bitrate: 500000\n    bitrat: 5\n",
			":3:5: controllers[0].bitrat: unknown key; did you mean bitrate? allowed keys: name, spi, int_gpio, int_poll_window, int_debounce, oscillator_hz, bitrate, sample_point, timing, mode, one_shot, triple_sampling, error_frames, restart_ms, tx_timeout, filters, interface, sim\n"},
		{"bitrate 0", "controllers:\n  - bitrate: 0\n",
			":2:14: controllers[0].bitrate: 0 is not allowed: bitrate must be 10000..1000000 bit/s\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeConfig(t, tc.body)
			code, out, errOut := runCand("-config", p, "-check-config")
			if code != 1 {
				t.Fatalf("exit %d, want 1 (stdout %q, stderr %q)", code, out, errOut)
			}
			if errOut != p+tc.want {
				t.Errorf("stderr\n%q\nwant\n%q", errOut, p+tc.want)
			}
		})
	}
}

// -check-config on a valid file prints each controller's timing in the words of
// `ip -details link show` plus the CNF bytes, and exits 0.
func TestCheckConfigPrintsTiming(t *testing.T) {
	p := writeConfig(t, "controllers:\n  - name: c0\n    bitrate: 500000\n    interface: {name: vcan7}\n")
	code, out, errOut := runCand("-config", p, "-check-config")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "c0 (vcan7): bitrate 500000 sample-point 0.875 tq 125 prop-seg 6 phase-seg1 7 phase-seg2 2 sjw 1 brp 1 cnf1 0x00 cnf2 0xb5 cnf3 0x01\n" + p + ": ok\n"
	if out != want {
		t.Fatalf("stdout\n%q\nwant\n%q", out, want)
	}
}

// triple_sampling sets CNF2.SAM (0x40): cnf2 0xb5 becomes 0xf5.
func TestCheckConfigTripleSampling(t *testing.T) {
	p := writeConfig(t, "controllers:\n  - name: c0\n    bitrate: 500000\n    triple_sampling: true\n    interface: {name: vcan7}\n")
	code, out, errOut := runCand("-config", p, "-check-config")
	want := "c0 (vcan7): bitrate 500000 sample-point 0.875 tq 125 prop-seg 6 phase-seg1 7 phase-seg2 2 sjw 1 brp 1 cnf1 0x00 cnf2 0xf5 cnf3 0x01\n" + p + ": ok\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d, stdout\n%q\nwant\n%q\n(stderr %s)", code, out, want, errOut)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCand("-version")
	if code != 0 || out != "cand dev\n" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
}

// The configurations the project ships are valid.
func TestShippedConfigsCheck(t *testing.T) {
	for _, p := range []string{"../../deploy/sim.yaml", "../../deploy/cand.yaml", "../../vm/cand-vm.yaml"} {
		if code, _, errOut := runCand("-config", p, "-check-config"); code != 0 {
			t.Errorf("%s: exit %d: %s", p, code, errOut)
		}
	}
}

// cand bench -run picks scenarios by name; a pattern that matches none, or does
// not compile, is refused with the reason (and the scenario names).
func TestBenchRunFilter(t *testing.T) {
	code, _, errOut := runCand("bench", "-quick", "-run", "no-such-scenario", "-config", "../../deploy/sim.yaml")
	if code != 2 || !bytes.Contains([]byte(errOut), []byte(`cand bench: -run "no-such-scenario" matches no scenario; the scenarios are: load100-125k-window-on, `)) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runCand("bench", "-run", "(", "-config", "../../deploy/sim.yaml")
	if code != 2 || !bytes.HasPrefix([]byte(errOut), []byte(`cand bench: -run "(": error parsing regexp`)) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// On a real board (hardware.backend bcm2835) cand bench runs only what needs no
// bus, with -loopback, and says so without it; -check refuses a baseline it
// cannot read before running anything; -loopback on the virtual Pi runs the
// board's scenarios there.
func TestBenchModes(t *testing.T) {
	dir := t.TempDir()
	board := filepath.Join(dir, "board.yaml")
	if err := os.WriteFile(board, []byte("hardware: {backend: bcm2835}\ncontrollers:\n  - bitrate: 500000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCand("bench", "-config", board)
	if want := "cand bench: " + board + " has hardware.backend bcm2835: on a real board only what needs no bus runs; add -loopback\n"; code != 2 || errOut != want {
		t.Errorf("exit %d, stderr %q; want 2, %q", code, errOut, want)
	}
	code, _, errOut = runCand("bench", "-check", filepath.Join(dir, "none.json"), "-config", "../../deploy/sim.yaml")
	if code != 1 || !strings.Contains(errOut, "none.json") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runCand("bench", "-loopback", "-run", "no-such", "-config", "../../deploy/sim.yaml")
	if code != 2 || !strings.Contains(errOut, "the scenarios are: loopback-125k-window-on, loopback-500k-window-on, loopback-1M-window-on, loopback-1M-window-off\n") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
