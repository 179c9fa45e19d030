package metrics

import (
	"strings"
	"testing"

	"cand/mcp2515"
)

// A controller programmed anew (a reload to 250 kbit/s) exports its new timing
// in the same series, the old one gone.
func TestBitTimingInfoSet(t *testing.T) {
	r := New("v")
	c := r.AddController("can0", "vcan0")
	info := r.AddBitTiming(c, BitTiming{BitTiming: kernelTiming(t), OscillatorHz: 16_000_000, SCLKHz: 10_000_000})
	bt, err := mcp2515.CalcBitTiming(16_000_000, 250_000, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	info.Set(BitTiming{BitTiming: bt, OscillatorHz: 16_000_000, SCLKHz: 10_000_000})
	text := scrapeText(t, r.Handler())
	want := `cand_bit_timing_info{bitrate="250000",brp="2",controller="can0",interface="vcan0",oscillator_hz="16000000",phase_seg1="7",phase_seg2="2",prop_seg="6",sample_point="0.875",sclk_hz="10000000",sjw="1",tq_ns="250"} 1`
	if !strings.Contains(text, "\n"+want+"\n") || strings.Contains(text, `bitrate="500000"`) {
		t.Errorf("exposition lacks\n\t%s\nor still has 500000:\n%s", want, text)
	}
}
