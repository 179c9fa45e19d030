package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// An alias bomb of unknown keys (2000 aliases of a mapping of 2000 keys: four
// million problems from 40 KB) is bounded: keys count against the budget of
// maxNodes values and keys, problems beyond maxFound are only counted, and
// nothing is checked once the budget is spent.
func TestAliasBombBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("x: &a {")
	for i := range 2000 {
		fmt.Fprintf(&b, "k%d: 1, ", i)
	}
	b.WriteString("}\ncontrollers: [" + strings.Repeat("*a, ", 2000) + "]\n")
	_, err := Parse("x.yaml", []byte(b.String()))
	var e *Errors
	if !errors.As(err, &e) {
		t.Fatalf("got %v", err)
	}
	// The root, its keys x and controllers, and the list take 4 of the budget;
	// each alias 1 and its 2000 keys 2000 more: 49 aliases are decoded whole,
	// the 50th up to its 1946th key. Problems: x, 49·2000 + 1946 unknown keys,
	// and the budget's.
	const found = 1 + 49*2000 + 1946 + 1
	if len(e.Problems) != MaxProblems || e.Omitted != found-MaxProblems {
		t.Errorf("%d problems shown, %d omitted; want %d and %d", len(e.Problems), e.Omitted, MaxProblems, found-MaxProblems)
	}
	const first = "x.yaml:1:1: x: unknown key; allowed keys: hardware, realtime, metrics, status, socketcand, controllers\n" +
		"x.yaml:1:8: controllers[0].k0: unknown key; allowed keys: name, spi, int_gpio, int_poll_window, int_debounce, oscillator_hz, bitrate, sample_point, timing, mode, one_shot, triple_sampling, error_frames, restart_ms, tx_timeout, filters, interface, sim\n"
	if !strings.HasPrefix(err.Error(), first) {
		t.Errorf("got:\n%.600s\nwant it to start with:\n%s", err, first)
	}
	if !strings.HasSuffix(err.Error(), fmt.Sprintf("\n(%d more problems not shown; fix these first)", found-MaxProblems)) {
		t.Errorf("no omission line: %.300s", err.Error()[len(err.Error())-300:])
	}
}

// A file that holds more values than the budget says so, and only that: what
// was not decoded is not reported missing.
func TestBudgetSpent(t *testing.T) {
	src := "controllers: [{bitrate: 500000, sim: {peers: [{kind: periodic, ids: [" + strings.Repeat("1, ", maxNodes) + "]}]}}]\n"
	const want = "x.yaml:1:%d: controllers[0].sim.peers[0].ids[%d]: the file holds, or expands to through aliases, more than 100000 values and keys; simplify it"
	// Spent before it: the root and its key, the list, the controller, its keys
	// bitrate and sim and the value of bitrate, sim, its key peers, the list,
	// the peer, its keys kind and ids and the value of kind, the list of ids.
	const before = 15
	col := len("controllers: [{bitrate: 500000, sim: {peers: [{kind: periodic, ids: [") + 1 + 3*(maxNodes-before)
	if got := parseErr(t, "x.yaml", src); got != fmt.Sprintf(want, col, maxNodes-before) {
		t.Errorf("got:\n%s\nwant:\n%s", got, fmt.Sprintf(want, col, maxNodes-before))
	}
}

// No more controllers than SPI0 has chip selects.
func TestTooManyControllers(t *testing.T) {
	src := "controllers: [" + strings.Repeat("{bitrate: 500000}, ", 52) + "]\n"
	const want = "x.yaml:1:14: controllers: 52 controllers given; SPI0 can address at most 51, one per chip select (any GPIO but the data pins: MISO 9, MOSI 10, SCLK 11)"
	if got := parseErr(t, "x.yaml", src); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
