package main

import (
	"fmt"
	"strings"
	"testing"
)

// counters is cand's /metrics for vcan0 (controller can0) with the given counter
// values; a name mapped to -1 is left out, as a cand without that metric would.
func counters(t *testing.T, c map[string]int) scrape {
	t.Helper()
	var b strings.Builder
	for name, v := range c {
		if v < 0 {
			continue
		}
		labels := `controller="can0",interface="vcan0"`
		if name == "cand_sim_peer_dropped_total" {
			labels = `controller="can0",peer="echo"`
		}
		fmt.Fprintf(&b, "%s{%s} %d\n", name, labels, v)
	}
	s, err := readScrape(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLedger(t *testing.T) {
	base := map[string]int{
		"cand_tx_frames_total": 100, "cand_socket_drops_total": 0, "cand_tx_dropped_total": 0, "cand_tx_invalid_total": 0,
		"cand_sim_peer_dropped_total": 0, "cand_rx_overflows_total": 0, "cand_rx_socket_errors_total": 0,
	}
	with := func(kv ...any) map[string]int {
		m := map[string]int{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1].(int)
		}
		return m
	}
	for _, tc := range []struct {
		what              string
		c                 map[string]int
		dumpDrops         int64
		offered, answered int
		want              string
	}{
		{"all answered", base, 0, 100, 100, ""},
		{"socket drops counted", with("cand_tx_frames_total", 40, "cand_socket_drops_total", 60), 0, 100, 40, ""},
		{"peer drops counted", with("cand_sim_peer_dropped_total", 3), 0, 100, 97, ""},
		{"TX side short", with("cand_tx_frames_total", 90), 0, 100, 90,
			"100 offered, cand sent 90 and counted 0 lost before the bus (no counter moved): 10 neither sent nor counted as lost: still queued in cand's socket, or lost with no counted cause"},
		{"TX side over", with("cand_socket_drops_total", 5), 0, 100, 100,
			"100 offered, cand sent 100 and counted 5 lost before the bus (cand_socket_drops_total 5): cand counted more frames than were offered: another sender on the interface?"},
		{"RX overflow", with("cand_rx_overflows_total", 2), 0, 100, 97,
			"100 offered = 97 answered + 0 counted before the bus (no counter moved) + cand_sim_peer_dropped_total 0 + 3 lost after the bus, counted by cand_rx_overflows_total 2 (counts of all received frames, not only answers)"},
		{"candump dropped", base, 4, 100, 96,
			"100 offered = 96 answered + 0 counted before the bus (no counter moved) + cand_sim_peer_dropped_total 0 + 4 lost after the bus, counted by candump DROPCOUNT 4 (counts of all received frames, not only answers)"},
		{"uncounted", base, 0, 100, 99,
			"100 offered = 99 answered + 0 counted before the bus (no counter moved) + cand_sim_peer_dropped_total 0 + 1 lost after the bus, with NO counted cause (cand_rx_overflows_total, cand_rx_socket_errors_total, candump DROPCOUNT all 0)"},
		{"uncounted, no peer metric", with("cand_sim_peer_dropped_total", -1), 0, 100, 99,
			"100 offered = 99 answered + 0 counted before the bus (no counter moved) + cand_sim_peer_dropped_total (not exported by this cand) + 1 lost after the bus, with NO counted cause (cand_rx_overflows_total, cand_rx_socket_errors_total, candump DROPCOUNT all 0); this cand does not export the answering peer's own drops (a full TX queue in sim/canbus), the one cause left"},
		{"extra answers", base, 0, 100, 101,
			"101 answered, but cand sent only 100 requests (cand_sim_peer_dropped_total 0): answers from elsewhere?"},
	} {
		l, err := newLedger(counters(t, tc.c), nil, "vcan0", tc.dumpDrops)
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		if got := l.check(tc.offered, tc.answered); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.what, got, tc.want)
		}
	}
}

// A base scrape makes the counters deltas: one cand run, several scenarios.
func TestLedgerDeltas(t *testing.T) {
	before := counters(t, map[string]int{"cand_tx_frames_total": 1000, "cand_socket_drops_total": 7, "cand_rx_overflows_total": 1})
	after := counters(t, map[string]int{"cand_tx_frames_total": 1040, "cand_socket_drops_total": 467, "cand_rx_overflows_total": 1})
	l, err := newLedger(after, before, "vcan0", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.check(500, 40); got != "" {
		t.Errorf("check: %q", got)
	}
	want := "vcan0: cand_tx_frames_total 40, cand_socket_drops_total 460, cand_tx_dropped_total (not exported by this cand), " +
		"cand_tx_invalid_total (not exported by this cand), cand_sim_peer_dropped_total (not exported by this cand), " +
		"cand_rx_overflows_total 0, cand_rx_socket_errors_total (not exported by this cand), candump DROPCOUNT 0"
	if l.String() != want {
		t.Errorf("String:\n got %q\nwant %q", l.String(), want)
	}
	if _, err := newLedger(after, nil, "vcan7", 0); err == nil || err.Error() != `no cand metric carries interface="vcan7"` {
		t.Errorf("unknown interface: %v", err)
	}
}
