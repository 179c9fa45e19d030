package canbus

import (
	"strings"
	"testing"
	"time"

	"go.einride.tech/can"
)

// A periodic peer with a data length per ID, and one sending remote frames: the
// frames on the bus have those shapes, and Seq gives back each frame's counter
// (from the data where it carries one, from the ID's place otherwise).
func TestPeerFrameShapes(t *testing.T) {
	b := New(500_000)
	rx := listener(t, b)
	mixed := newPeer(t, b, PeerSpec{Kind: PeerPeriodic, Name: "mixed", IDs: []uint32{0x10, 0x11, 0x12, 0x13},
		DLCs: []uint8{8, 0, 2, 5}, Period: time.Millisecond})
	remote := newPeer(t, b, PeerSpec{Kind: PeerPeriodic, Name: "remote", IDs: []uint32{0x1234567, 0x1234568}, Extended: true,
		Remote: true, DLC: u8(6), Period: time.Millisecond})
	advance(b, t0)
	mixed.Start(t0)
	remote.Start(t0)
	advance(b, t0+8_500_000)
	var n [2]uint64
	for _, r := range rx.Received() {
		f := r.Frame
		p, k := mixed, 0
		if f.IsExtended {
			p, k = remote, 1
		}
		i := int(n[k] % uint64(len(p.spec.IDs)))
		want := can.Frame{ID: p.spec.IDs[i], IsExtended: k == 1, IsRemote: k == 1, Length: []uint8{8, 0, 2, 5}[i]}
		if k == 1 {
			want.Length = 6
		} else {
			want.Data = Payload(n[k], want.Length)
		}
		if f != want {
			t.Fatalf("%s frame %d = %v, want %v", p.Name(), n[k], f, want)
		}
		c, mod, ok := p.Seq(f)
		wantMod := map[uint8]uint64{8: 0, 0: 4, 2: 1 << 16, 5: 1 << 32}[want.Length]
		if k == 1 {
			wantMod = 2
		}
		if !ok || mod != wantMod || (mod == 0 && c != n[k]) || (mod != 0 && c != n[k]%mod) {
			t.Fatalf("%s.Seq(%v) = %d mod %d, %v; want %d mod %d", p.Name(), f, c, mod, ok, n[k], wantMod)
		}
		n[k]++
	}
	if n[0] != 9 || n[1] != 9 {
		t.Fatalf("received %d and %d frames, want 9 of each", n[0], n[1])
	}
	for _, f := range []can.Frame{
		{ID: 0x10, Length: 7},                   // wrong length for its ID
		{ID: 0x99, Length: 8},                   // not an ID of the peer
		{ID: 0x13, Length: 5, Data: can.Data{}}, // dlc 5 without the pattern bytes
		{ID: 0x11, IsRemote: true},              // remote, the peer sends data frames
	} {
		if _, _, ok := mixed.Seq(f); ok {
			t.Errorf("mixed.Seq(%v) ok, want not the peer's", f)
		}
	}
}

// A 1-byte counter over 251 IDs: the data gives the counter modulo 256, the ID
// modulo 251, together modulo 64256.
func TestSeqCombinesDataAndID(t *testing.T) {
	ids := make([]uint32, 251)
	for i := range ids {
		ids[i] = uint32(0x100 + i)
	}
	p := newPeer(t, New(500_000), PeerSpec{Kind: PeerLoad, Name: "p", IDs: ids, DLC: u8(1), LoadPercent: 50})
	for _, n := range []uint64{0, 1, 255, 256, 250, 251, 64255, 64256, 100000} {
		f := p.frame(int(n%251), n)
		c, mod, ok := p.Seq(f)
		if !ok || mod != 64256 || c != n%64256 {
			t.Errorf("Seq(frame %d) = %d mod %d %v, want %d mod 64256", n, c, mod, ok, n%64256)
		}
	}
}

// Stuffing payloads repeat the same data per ID; with several IDs the ID's place
// is the counter.
func TestPeerStuffingPayload(t *testing.T) {
	b := New(1_000_000)
	rx := listener(t, b)
	ids := []uint32{0x100, 0x101, 0x102}
	most := newPeer(t, b, PeerSpec{Kind: PeerLoad, Name: "most", IDs: ids, Payload: PayloadStuffMax, LoadPercent: 100})
	advance(b, t0)
	most.Start(t0)
	advance(b, t0+2_000_000)
	got := rx.Received()
	if len(got) < 10 {
		t.Fatalf("%d frames in 2 ms at 100 %%", len(got))
	}
	for i, r := range got {
		f := r.Frame
		want := can.Frame{ID: ids[i%3], Length: 8}
		want.Data = StuffedData(want, true)
		if f != want {
			t.Fatalf("frame %d = %v, want %v", i, f, want)
		}
		if c, mod, ok := most.Seq(f); !ok || mod != 3 || c != uint64(i%3) {
			t.Fatalf("Seq(frame %d) = %d mod %d %v, want %d mod 3", i, c, mod, ok, i%3)
		}
	}
}

// An errors peer destroys one frame every period: the load peer's frame is hit,
// counted as its TX error, and sent again.
func TestErrorsPeer(t *testing.T) {
	b := New(1_000_000)
	rx := listener(t, b)
	ld := newPeer(t, b, PeerSpec{Kind: PeerLoad, Name: "load", IDs: []uint32{0x123}, LoadPercent: 100})
	ep := newPeer(t, b, PeerSpec{Kind: PeerErrors, Name: "noise", Period: time.Millisecond})
	evs := record(b)
	advance(b, t0)
	ld.Start(t0)
	ep.Start(t0)
	advance(b, t0+10_000_000-1)
	var errs int
	for _, e := range *evs {
		if e.Kind == EvError {
			errs++
			if e.Err != BitError {
				t.Errorf("error %v, want a bit error", e.Err)
			}
		}
	}
	if errs != 10 || b.Stats().Errors != 10 || ld.Stats().TxErrors != 10 || rx.Stats().RxErrors != 10 {
		t.Fatalf("%d error frames, bus %d, load peer %d TX errors, listener %d RX errors; want 10 each", errs, b.Stats().Errors, ld.Stats().TxErrors, rx.Stats().RxErrors)
	}
	// Every frame the load peer completed carries the next counter: the destroyed
	// ones were sent again.
	for i, r := range rx.Received() {
		if c, _ := Counter(r.Frame); c != uint64(i) {
			t.Fatalf("frame %d carries counter %d", i, c)
		}
	}
	if s := ep.Stats(); s.Sent != 0 {
		t.Fatalf("errors peer sent %d frames", s.Sent)
	}
}

func TestPeerOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		spec PeerSpec
		want string
	}{
		{PeerSpec{Kind: PeerPeriodic, Name: "a", IDs: []uint32{1, 2}, DLCs: []uint8{8}}, `sim peer "a": 1 dlcs for 2 ids: give one data length per id`},
		{PeerSpec{Kind: PeerLoad, Name: "b", IDs: []uint32{1}, DLCs: []uint8{9}, LoadPercent: 5}, `sim peer "b": dlcs[0] 9 is out of range: use 0..8`},
		{PeerSpec{Kind: PeerPeriodic, Name: "c", IDs: []uint32{1}, Remote: true, Payload: PayloadStuffMin}, `sim peer "c": payload stuff-min with remote frames: remote frames carry no data`},
		{PeerSpec{Kind: PeerAnswer, Name: "d", Remote: true}, `sim peer "d": dlcs, remote and payload shape the frames of periodic and load peers; answer peers send none of their own`},
		{PeerSpec{Kind: PeerErrors, Name: "e", Period: -time.Second}, `sim peer "e": period -1s is negative: use a positive duration`},
		{PeerSpec{Kind: PeerPeriodic, Name: "f", IDs: []uint32{1}, Payload: 7}, `sim peer "f": unknown payload PayloadKind(7): use counter, stuff-min or stuff-max`},
	} {
		_, err := NewPeer(New(500_000), tc.spec)
		if err == nil || err.Error() != tc.want {
			t.Errorf("NewPeer(%+v) error = %v, want %s", tc.spec, err, tc.want)
		}
	}
	if !strings.Contains(PayloadStuffMax.String()+PayloadCounter.String(), "stuff-maxcounter") {
		t.Errorf("payload names %q %q", PayloadStuffMax, PayloadCounter)
	}
}
