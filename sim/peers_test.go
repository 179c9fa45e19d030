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
		Period: config.Duration(3 * time.Millisecond), DLC: &dlc, IDOffset: 7, LoadPercent: 42.5,
		DLCs: []uint8{1, 2}, Remote: true, Payload: config.PayloadStuffMax}
	got, err := peerSpec(sp)
	if err != nil {
		t.Fatal(err)
	}
	want := canbus.PeerSpec{Kind: canbus.PeerLoad, Name: "ld", IDs: []uint32{0x10, 0x20}, Extended: true,
		Period: 3 * time.Millisecond, DLC: &dlc, IDOffset: 7, LoadPercent: 42.5,
		DLCs: []uint8{1, 2}, Remote: true, Payload: canbus.PayloadStuffMax}
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
		{config.PeerErrors, canbus.PeerErrors},
	} {
		got, err := peerSpec(config.SimPeer{Kind: tc.in})
		if err != nil || got.Kind != tc.want {
			t.Errorf("peerSpec(kind %q) = kind %v, %v; want %v, nil", tc.in, got.Kind, err, tc.want)
		}
	}
	_, err := peerSpec(config.SimPeer{Kind: "burst", Name: "b"})
	const want = `sim peer "b": unknown kind "burst": use periodic, answer, load or errors`
	if err == nil || err.Error() != want {
		t.Errorf("peerSpec(kind burst) error = %v, want %s", err, want)
	}
	for in, want := range map[config.SimPayload]canbus.PayloadKind{"": canbus.PayloadCounter, config.PayloadCounter: canbus.PayloadCounter,
		config.PayloadStuffMin: canbus.PayloadStuffMin, config.PayloadStuffMax: canbus.PayloadStuffMax} {
		if got, err := peerSpec(config.SimPeer{Kind: config.PeerLoad, Payload: in}); err != nil || got.Payload != want {
			t.Errorf("peerSpec(payload %q) = %v, %v; want %v", in, got.Payload, err, want)
		}
	}
	if _, err := peerSpec(config.SimPeer{Kind: config.PeerLoad, Name: "p", Payload: "most"}); err == nil ||
		err.Error() != `sim peer "p": unknown payload "most": use counter, stuff-min or stuff-max` {
		t.Errorf("peerSpec(payload most) error = %v", err)
	}
}
