package gpio

import (
	"strings"
	"testing"
	"time"
)

func TestLineConfigRequest(t *testing.T) {
	cfg := LineConfig{Consumer: "cand can0 INT", Bias: BiasPullUp, Edge: EdgeFalling, Debounce: 5500 * time.Nanosecond, EventBufferSize: 64}
	r, err := cfg.request(25)
	if err != nil {
		t.Fatal(err)
	}
	var want lineRequest
	want.Offsets[0] = 25
	copy(want.Consumer[:], "cand can0 INT")
	want.NumLines = 1
	want.EventBufferSize = 64
	want.Config.Flags = uint64(LineFlagInput | LineFlagBiasPullUp | LineFlagEdgeFalling)
	want.Config.NumAttrs = 1
	want.Config.Attrs[0] = lineConfigAttribute{Attr: lineAttribute{ID: attrIDDebounce, Data: 5}, Mask: 1}
	if r != want {
		t.Errorf("request =\n%+v\nwant\n%+v", r, want)
	}
}

func TestLineConfigFlags(t *testing.T) {
	for _, c := range []struct {
		cfg  LineConfig
		want LineFlag
	}{
		{LineConfig{}, LineFlagInput},
		{LineConfig{Edge: EdgeRising, Bias: BiasPullDown}, LineFlagInput | LineFlagEdgeRising | LineFlagBiasPullDown},
		{LineConfig{Edge: EdgeBoth, Bias: BiasDisabled, ActiveLow: true}, LineFlagInput | LineFlagEdgeRising | LineFlagEdgeFalling | LineFlagBiasDisabled | LineFlagActiveLow},
	} {
		r, err := c.cfg.request(3)
		if err != nil {
			t.Fatalf("%+v: %v", c.cfg, err)
		}
		if LineFlag(r.Config.Flags) != c.want || r.Config.NumAttrs != 0 {
			t.Errorf("%+v: flags %#x, %d attrs; want %#x, 0", c.cfg, r.Config.Flags, r.Config.NumAttrs, uint64(c.want))
		}
	}
}

func TestLineConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  LineConfig
		want string
	}{
		{LineConfig{Consumer: strings.Repeat("x", 32)}, `gpio: consumer label "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" is 32 bytes; the kernel keeps at most 31: shorten it`},
		{LineConfig{Debounce: -1}, "gpio: debounce -1ns out of range: use 0 (off) up to 1h11m34.967295s"},
		{LineConfig{Debounce: 500}, "gpio: debounce 500ns is below the kernel's 1µs resolution: use 0 (off) or at least 1µs"},
		{LineConfig{Bias: 9}, "gpio: unknown Bias(9): use BiasAsIs, BiasPullUp, BiasPullDown or BiasDisabled"},
		{LineConfig{Edge: 9}, "gpio: unknown Edge(9): use EdgeNone, EdgeFalling, EdgeRising or EdgeBoth"},
	} {
		if _, err := c.cfg.request(0); err == nil || err.Error() != c.want {
			t.Errorf("%+v: error %v\nwant %s", c.cfg, err, c.want)
		}
	}
}
