package bench

import (
	"slices"
	"time"

	"go.einride.tech/can"

	"cand/config"
	"cand/sim/canbus"
)

// Workloads are the scenarios of a real bus's traffic, each at 1 Mbit/s with the
// INT poll window on unless said otherwise, on every board of WorkloadBoards, and
// on KernelBoards also run with the kernel driver's way (Scenario.Kernel):
//   - dlc0, dlc1, dlc4, dlc8: the bus at 100 % with 0-, 1-, 4- and 8-byte frames
//     (dlc8 is load100-1M-window-on on each board); DLC 0 frames carry no data, so the load peer
//     sends 1024 IDs in turn and the ID tells the counter; a 1-byte counter is
//     short, so the DLC 1 peer sends 251 IDs in turn, which with the data tell the
//     counter modulo 64256 (canbus.Peer.Seq); dlc0 and dlc8 also at 500 kbit/s;
//   - ext29: 29-bit IDs at 100 %;
//   - stuff-min, stuff-max: 8-byte frames whose data has the fewest and the most
//     stuff bits (canbus.StuffedData), 256 IDs in turn chosen for the fewest and
//     the most stuff bits in the whole frame (the ID tells the counter);
//   - vehicle (500 kbit/s): periodic frames of many IDs and lengths every 10, 20,
//     100 and 1000 ms, remote frames, 29-bit J1939-style frames, and IDs that
//     cand's hardware filters drop in the chip;
//   - errors: the bus at 100 % while a node destroys one frame every millisecond;
//   - tx-share: a peer keeps the bus 80 % busy while the benchmark writes 8-byte
//     frames to cand's socket for the rest, IDs 0x0F0 (winning arbitration
//     against the peer's 0x123) and 0x300 (losing) in turn;
//   - dual: two controllers on one SPI bus (CE0 and CE1), both buses at 100 %;
//   - loopback: the controller in loopback mode, frames written to its socket
//     every 250 µs coming back from the chip (no bus: the scenario a real board
//     runs, see board.go);
//   - cangen99, on the Pi 3 only: the field check (cangen99), 99 % of the bus
//     with cangen's default frames, for FieldCheckDuration.
func Workloads(d Durations) []Scenario {
	load := func(name string, ids []uint32, dlc uint8) Peer {
		return Peer{SimPeer: config.SimPeer{Kind: config.PeerLoad, Name: name, IDs: ids, DLC: dlcPtr(dlc), LoadPercent: 100}}
	}
	one := func(kind string, peers ...Peer) *Workload {
		return &Workload{Kind: kind, Buses: []BusLoad{{Peers: peers}}}
	}
	ext := load("load", []uint32{0x18FEF100, 0x0CF00400}, 8)
	ext.Extended = true
	stuff := func(most bool) Peer {
		p := load("load", stuffIDs(256, most), 8)
		p.Payload = config.PayloadStuffMin
		if most {
			p.Payload = config.PayloadStuffMax
		}
		return p
	}
	share := load("load", []uint32{0x123}, 8)
	share.LoadPercent = 80
	dlc0 := func() *Workload { return one("dlc0", load("load", IDRange(0x200, 1024), 0)) }
	dlc8 := func() *Workload { return one("dlc8", load("load", []uint32{0x123}, 8)) }
	wls := []*Workload{
		dlc0(),
		one("dlc1", load("load", IDRange(0x100, 251), 1)),
		one("dlc4", load("load", []uint32{0x123}, 4)),
		dlc8(),
		one("ext29", ext),
		one("stuff-min", stuff(false)),
		one("stuff-max", stuff(true)),
		vehicle(),
		one("errors", load("load", []uint32{0x123}, 8),
			Peer{SimPeer: config.SimPeer{Kind: config.PeerErrors, Name: "noise", Period: config.Duration(time.Millisecond)}}),
		{Kind: "tx-share", Buses: []BusLoad{{Peers: []Peer{share}}},
			TX: &TXStream{IDs: []uint32{0x0F0, 0x300}, Period: 600 * time.Microsecond}},
		{Kind: "dual", Buses: []BusLoad{{Peers: []Peer{load("load0", []uint32{0x123}, 8)}}, {Peers: []Peer{load("load1", []uint32{0x124}, 8)}}}},
		{Kind: "loopback", Buses: []BusLoad{{}}, Loopback: true,
			TX: &TXStream{IDs: []uint32{0x123}, Period: 250 * time.Microsecond}},
	}
	// Each workload at 1 Mbit/s but vehicle; dlc0 and dlc8 at 500 kbit/s too.
	rates := make([]uint32, len(wls))
	for i, wl := range wls {
		rates[i] = 1_000_000
		if wl.Kind == "vehicle" {
			rates[i] = 500_000
		}
	}
	wls, rates = append(wls, dlc0(), dlc8()), append(rates, 500_000, 500_000)
	var s []Scenario
	for _, b := range WorkloadBoards {
		for i, wl := range wls {
			br := rates[i]
			s = append(s, Scenario{Name: wl.Kind + "-" + Rate(br) + "-" + string(b), Bitrate: br, DLC: 8,
				IntPollWindow: DefaultIntPollWindow, Duration: d.Other, Workload: wl, Board: b,
				Kernel: KernelOn(b)})
		}
	}
	return append(s, FieldCheck())
}

// WorkloadBoards are the board profiles every workload runs on: the single-core
// Pi Zero, the Pi 2 the kernel driver's costs were measured on, and the Pi 3 and
// Pi 4 (docs/boards.md).
var WorkloadBoards = []config.SimBoard{config.SimBoardPiZero, KernelBoard, config.SimBoardPi3, config.SimBoardPi4}

// KernelBoard is the profile the kernel driver's costs were measured on
// (kernelref.Pi2).
const KernelBoard = config.SimBoardPi2

// KernelOn reports whether the kernel driver's way runs on board b, with cand
// beside it on the same profile: the Pi 2 its costs were measured on and the
// Pi 3 they are scaled to (kernelref.ForBoard).
func KernelOn(b config.SimBoard) bool { return b == KernelBoard || b == config.SimBoardPi3 }

// vehicle is a vehicle bus at 500 kbit/s, about 55 % busy: a periodic peer sends
// one frame of its IDs in turn every period, so each ID repeats every period ×
// the number of IDs.
func vehicle() *Workload {
	per := func(name string, period time.Duration, ids []uint32, dlcs ...uint8) Peer {
		p := Peer{SimPeer: config.SimPeer{Kind: config.PeerPeriodic, Name: name, IDs: ids, Period: config.Duration(period)}}
		if len(dlcs) == 1 {
			p.DLC = dlcPtr(dlcs[0])
		} else {
			p.DLCs = dlcs
		}
		return p
	}
	j1939 := per("j1939", 10*time.Millisecond, []uint32{0x18FEF100, 0x18FEEE00}, 8) // each every 20 ms
	j1939.Extended = true
	remote := per("remote", 12500*time.Microsecond, IDRange(0x7D0, 8), 8) // each every 100 ms
	remote.Remote = true
	filtered := per("filtered", 2*time.Millisecond, []uint32{0x500, 0x501, 0x502, 0x503, 0x504, 0x280}, 8)
	return &Workload{Kind: "vehicle", Buses: []BusLoad{{
		Peers: []Peer{
			per("engine", time.Millisecond, IDRange(0x0C0, 10), 8),                               // each every 10 ms
			per("chassis", 2*time.Millisecond, IDRange(0x1A0, 10), 8, 6, 4, 8, 2, 8, 5, 8, 7, 3), // each every 20 ms
			per("body", 5*time.Millisecond, IDRange(0x3C0, 20),
				8, 1, 2, 0, 4, 8, 8, 3, 1, 6, 8, 2, 8, 5, 0, 8, 1, 4, 8, 2), // each every 100 ms
			per("slow", 100*time.Millisecond, IDRange(0x700, 10), 8), // each every 1000 ms
			remote, j1939,
			{SimPeer: filtered.SimPeer, Filtered: true},
		},
		// RXB0: 0x000-0x1FF; RXB1: 0x300-0x3FF, 0x700-0x7FF and extended IDs whose
		// top 11 bits are 0x600-0x6FF. The filtered peer's 0x280 and 0x500-0x504 fall
		// outside.
		Filters: "{mask0: {id: 0x700}, mask1: {id: 0x700}, filters: [{id: 0x000}, {id: 0x100}, {id: 0x300}, {id: 0x700}, {id: 0x18FEF100, extended: true}]}",
	}}}
}

// stuffIDs are n standard IDs, among every fourth, whose 8-byte frames with the
// least (most false) or most stuffing data are the shortest or the longest.
func stuffIDs(n int, most bool) []uint32 {
	type cand struct {
		id   uint32
		bits int
	}
	var cs []cand
	for id := uint32(0); id <= can.MaxID; id += 4 {
		f := can.Frame{ID: id, Length: 8}
		f.Data = canbus.StuffedData(f, most)
		cs = append(cs, cand{id, canbus.FrameBits(f)})
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		if most {
			return b.bits - a.bits
		}
		return a.bits - b.bits
	})
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = cs[i].id
	}
	slices.Sort(ids)
	return ids
}
