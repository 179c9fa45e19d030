package config

import (
	"reflect"
	"testing"
	"time"
)

// TestPeerFlowYAML checks that Parse reads each peer's FlowYAML back as the same
// peer, its defaults filled.
func TestPeerFlowYAML(t *testing.T) {
	u8 := func(v uint8) *uint8 { return &v }
	period := Duration(5 * time.Millisecond)
	for _, tc := range []struct {
		give SimPeer
		yaml string
		want SimPeer // give with the defaults Parse fills
	}{
		{
			give: SimPeer{Kind: PeerPeriodic, Name: "p", IDs: []uint32{0x1FFFFFFF, 0x10}, Extended: true, Period: period, DLC: u8(3), Payload: PayloadStuffMax},
			yaml: "{kind: periodic, name: p, ids: [0x1fffffff, 0x10], extended: true, period: 5ms, dlc: 3, payload: stuff-max}",
			want: SimPeer{Kind: PeerPeriodic, Name: "p", IDs: []uint32{0x1FFFFFFF, 0x10}, Extended: true, Period: period, DLC: u8(3), IDOffset: DefaultPeerIDOffset, Payload: PayloadStuffMax},
		},
		{
			give: SimPeer{Kind: PeerLoad, Name: "l", IDs: []uint32{1, 2}, LoadPercent: 12.5, DLCs: []uint8{0, 8}, Remote: true},
			yaml: "{kind: load, name: l, ids: [0x1, 0x2], load_percent: 12.5, dlcs: [0, 8], remote: true}",
			want: SimPeer{Kind: PeerLoad, Name: "l", IDs: []uint32{1, 2}, Period: DefaultPeerPeriod, DLC: u8(DefaultPeerDLC), IDOffset: DefaultPeerIDOffset, LoadPercent: 12.5, DLCs: []uint8{0, 8}, Remote: true},
		},
		{
			give: SimPeer{Kind: PeerAnswer, IDOffset: 7},
			yaml: "{kind: answer, id_offset: 7}",
			want: SimPeer{Kind: PeerAnswer, Name: "answer0", Period: DefaultPeerPeriod, DLC: u8(DefaultPeerDLC), IDOffset: 7},
		},
	} {
		y := tc.give.FlowYAML()
		if y != tc.yaml {
			t.Errorf("FlowYAML = %s, want %s", y, tc.yaml)
		}
		c, err := Parse("x.yaml", []byte("controllers:\n  - bitrate: 500000\n    sim:\n      peers:\n        - "+y+"\n"))
		if err != nil {
			t.Fatalf("%s: %v", y, err)
		}
		if got := c.Controllers[0].Sim.Peers[0]; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s parsed as %+v, want %+v", y, got, tc.want)
		}
	}
}
