package metrics

import (
	"strings"
	"testing"

	"cand/mcp2515"
)

func kernelTiming(t *testing.T) mcp2515.BitTiming {
	t.Helper()
	bt, err := mcp2515.CalcBitTiming(16_000_000, 500_000, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	return bt
}

// cand_bit_timing_info carries the timing in the words of ip -details link show
// (500 kbit/s on 16 MHz: sample point 0.875, tq 125 ns, 6/7/2, sjw 1, brp 1), the
// crystal and SCLK, as labels of a gauge that is 1.
func TestBitTimingInfo(t *testing.T) {
	r := New("v")
	c := r.AddController("can0", "vcan0")
	r.AddBitTiming(c, BitTiming{BitTiming: kernelTiming(t), OscillatorHz: 16_000_000, SCLKHz: 10_000_000})
	text := scrapeText(t, r.Handler())
	for _, line := range []string{
		"# TYPE cand_bit_timing_info gauge",
		`cand_bit_timing_info{bitrate="500000",brp="1",controller="can0",interface="vcan0",oscillator_hz="16000000",phase_seg1="7",phase_seg2="2",prop_seg="6",sample_point="0.875",sclk_hz="10000000",sjw="1",tq_ns="125"} 1`,
	} {
		if !strings.Contains(text, "\n"+line+"\n") {
			t.Errorf("exposition lacks the line\n\t%s\nexposition:\n%s", line, text)
		}
	}
}
