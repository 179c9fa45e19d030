package sim

import (
	"reflect"
	"testing"
	"time"

	"cand/config"
	"cand/sim/canbus"
)

func TestPeerSpecCarriesEveryField(t *testing.T) {
	dlc := uint8(4)
	sp := config.SimPeer{Kind: config.PeerLoad, Name: "ld", IDs: []uint32{0x10, 0x20}, Extended: true,
		Period: config.Duration(3 * time.Millisecond), DLC: &dlc, IDOffset: 7, LoadPercent: 42.5}
	got, err := peerSpec(sp)
	if err != nil {
		t.Fatal(err)
	}
	want := canbus.PeerSpec{Kind: canbus.PeerLoad, Name: "ld", IDs: []uint32{0x10, 0x20}, Extended: true,
		Period: 3 * time.Millisecond, DLC: &dlc, IDOffset: 7, LoadPercent: 42.5}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("peerSpec(%+v) = %+v, want %+v", sp, got, want)
	}
}

func TestPeerSpecKinds(t *testing.T) {
	for _, tc := range []struct {
		in   config.SimPeerKind
		want canbus.PeerKind
	}{
		{config.PeerPeriodic, canbus.PeerPeriodic},
		{config.PeerAnswer, canbus.PeerAnswer},
		{config.PeerLoad, canbus.PeerLoad},
	} {
		got, err := peerSpec(config.SimPeer{Kind: tc.in})
		if err != nil || got.Kind != tc.want {
			t.Errorf("peerSpec(kind %q) = kind %v, %v; want %v, nil", tc.in, got.Kind, err, tc.want)
		}
	}
	_, err := peerSpec(config.SimPeer{Kind: "burst", Name: "b"})
	const want = `sim peer "b": unknown kind "burst": use periodic, answer or load`
	if err == nil || err.Error() != want {
		t.Errorf("peerSpec(kind burst) error = %v, want %s", err, want)
	}
}
