package bench

import (
	"math/rand/v2"
	"time"

	"cand/config"
)

// FieldCheckDuration is the field check's window, in -quick and full runs
// alike: at the ~10,000 frames/s of its traffic, about a million frames offered
// to the kernel driver's way if the virtual Pi's time keeps up with the host's.
const FieldCheckDuration = 120 * time.Second

// FieldCheck is the scenario that checks the kernel driver's way against a field
// report: a Raspberry Pi 3 with the kernel's mcp251x driver captured 1 million
// frames of a 99 % loaded 1 Mbit/s bus, loaded with "a couple of copies of
// cangen", without a drop while otherwise idle (sponaugle.com/wp/2018/01/25/canbus).
// The traffic is cangen's default frames (can-utils cangen.c: -I, -L and -D
// random; with -g 0 for a full bus): standard IDs, data lengths drawn as random()
// & 0xF with anything above 8 sent as 8 (0..7 each 1/16, 8 half the time: 5.75
// bytes on average), on one load peer at 99 % (cangenFrames). The data carries
// the peer's counter rather than random bytes, so the frames' stuff bits differ
// from cangen's. It runs on the Pi 3 only, cand beside the kernel's way, for
// FieldCheckDuration.
func FieldCheck() Scenario {
	ids, dlcs := cangenFrames(cangenIDs)
	p := Peer{SimPeer: config.SimPeer{Kind: config.PeerLoad, Name: "cangen", IDs: ids, DLCs: dlcs, LoadPercent: 99}}
	wl := &Workload{Kind: "cangen99", Buses: []BusLoad{{Peers: []Peer{p}}}}
	b := config.SimBoardPi3
	return Scenario{Name: wl.Kind + "-" + Rate(1_000_000) + "-" + string(b), Bitrate: 1_000_000, DLC: 8,
		IntPollWindow: DefaultIntPollWindow, Duration: FieldCheckDuration, Workload: wl, Board: b, Kernel: KernelOn(b)}
}

// cangenIDs is how many distinct IDs the field check's peer sends in turn: odd,
// so that with a data counter of 1 to 4 bytes the ID's place still tells the
// whole counter modulo a large number (canbus.Peer.Seq), and large, so that DLC
// 0 frames, which carry only the ID, tell it modulo 1021.
const cangenIDs = 1021

// cangenFrames is n distinct standard IDs in a fixed pseudo-random order, each
// with a data length drawn as cangen draws it (random() & 0xF, above 8 sent as
// 8). The generator's seed is fixed: every run offers the same frames.
func cangenFrames(n int) (ids []uint32, dlcs []uint8) {
	r := rand.New(rand.NewPCG(0x63616e67, 0x656e3939))
	for _, id := range r.Perm(2048)[:n] {
		ids = append(ids, uint32(id))
		dlcs = append(dlcs, uint8(min(r.IntN(16), 8)))
	}
	return ids, dlcs
}
