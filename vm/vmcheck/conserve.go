package main

import (
	"fmt"
	"strings"
)

// The ledger of one request/answer flow through cand: every frame a sender
// offered on the interface is either answered in the dump or lost by a cause a
// counter names.
//
//	sender → cand's socket → MCP2515 TX → bus → answering peer → bus →
//	MCP2515 RX → cand → interface → candump
//
// TX side, per frame and exact: offered = cand_tx_frames_total +
// cand_socket_drops_total (SO_RXQ_OVFL on cand's socket) + cand_tx_dropped_total +
// cand_tx_invalid_total. Answer side: cand_tx_frames_total = answered +
// cand_sim_peer_dropped_total (the peer's full TX queue) + frames lost on the RX
// path, which cand_rx_overflows_total, cand_rx_socket_errors_total and candump's
// own DROPCOUNT must name (they count every frame cand receives, not only the
// answers, so they name the cause without giving the exact number).

// loss is one counter of lost frames.
type loss struct {
	Name     string
	N        int64
	Exported bool // false: this cand has no such metric
}

func (l loss) String() string {
	if !l.Exported {
		return l.Name + " (not exported by this cand)"
	}
	return fmt.Sprintf("%s %d", l.Name, l.N)
}

type ledger struct {
	Iface    string
	TXFrames int64
	TX       []loss // lost before the bus
	Peer     loss
	RX       []loss // lost after the bus
}

// newLedger reads iface's counters from after, minus those in before (nil: from
// cand's start), and dumpDrops, the frames candump's socket dropped.
func newLedger(after, before scrape, iface string, dumpDrops int64) (ledger, error) {
	l := ledger{Iface: iface}
	ctl, ok := after.controllerOf(iface)
	if !ok {
		return l, fmt.Errorf("no cand metric carries interface=%q", iface)
	}
	get := func(name string, match map[string]string) loss {
		v, ok := after.value(name, match)
		if b, _ := before.value(name, match); ok {
			v -= b
		}
		return loss{Name: name, N: int64(v), Exported: ok}
	}
	byIface := map[string]string{"interface": iface}
	tx := get("cand_tx_frames_total", byIface)
	if !tx.Exported {
		return l, fmt.Errorf("no cand_tx_frames_total for interface %s", iface)
	}
	l.TXFrames = tx.N
	for _, n := range []string{"cand_socket_drops_total", "cand_tx_dropped_total", "cand_tx_invalid_total"} {
		l.TX = append(l.TX, get(n, byIface))
	}
	l.Peer = get("cand_sim_peer_dropped_total", map[string]string{"controller": ctl})
	for _, n := range []string{"cand_rx_overflows_total", "cand_rx_socket_errors_total"} {
		l.RX = append(l.RX, get(n, byIface))
	}
	l.RX = append(l.RX, loss{Name: "candump DROPCOUNT", N: dumpDrops, Exported: true})
	return l, nil
}

func sum(ls []loss) int64 {
	var n int64
	for _, l := range ls {
		n += l.N
	}
	return n
}

// String is the ledger as one line for the log.
func (l ledger) String() string {
	var parts []string
	for _, x := range append(append(append([]loss{}, l.TX...), l.Peer), l.RX...) {
		parts = append(parts, x.String())
	}
	return fmt.Sprintf("%s: cand_tx_frames_total %d, %s", l.Iface, l.TXFrames, strings.Join(parts, ", "))
}

// check balances offered frames against answered ones and the counted losses;
// "" when every frame is accounted for, else what does not add up, naming the
// counters that saw a loss (or saying that none did).
func (l ledger) check(offered, answered int) string {
	lostTX := sum(l.TX)
	if got := l.TXFrames + lostTX; got != int64(offered) {
		what := "cand counted more frames than were offered: another sender on the interface?"
		if got < int64(offered) {
			what = fmt.Sprintf("%d neither sent nor counted as lost: still queued in cand's socket, or lost with no counted cause", int64(offered)-got)
		}
		return fmt.Sprintf("%d offered, cand sent %d and counted %d lost before the bus (%s): %s",
			offered, l.TXFrames, lostTX, nonzero(l.TX), what)
	}
	lostRX := l.TXFrames - l.Peer.N - int64(answered)
	switch {
	case lostRX == 0:
		return ""
	case lostRX < 0:
		return fmt.Sprintf("%d answered, but cand sent only %d requests (%s): answers from elsewhere?", answered, l.TXFrames, l.Peer)
	}
	msg := fmt.Sprintf("%d offered = %d answered + %d counted before the bus (%s) + %s + %d lost after the bus",
		offered, answered, lostTX, nonzero(l.TX), l.Peer, lostRX)
	if sum(l.RX) == 0 {
		msg += ", with NO counted cause (" + listed(l.RX) + " all 0)"
		if !l.Peer.Exported {
			msg += "; this cand does not export the answering peer's own drops (a full TX queue in sim/canbus), the one cause left"
		}
		return msg
	}
	return msg + ", counted by " + nonzero(l.RX) + " (counts of all received frames, not only answers)"
}

// nonzero lists the losses that counted something, or says none did.
func nonzero(ls []loss) string {
	var parts []string
	for _, l := range ls {
		if l.N != 0 {
			parts = append(parts, l.String())
		}
	}
	if len(parts) == 0 {
		return "no counter moved"
	}
	return strings.Join(parts, ", ")
}

func listed(ls []loss) string {
	var names []string
	for _, l := range ls {
		names = append(names, l.Name)
	}
	return strings.Join(names, ", ")
}
