package metrics

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"cand/internal/promtest"
)

// promtool check metrics lints the text exposition: names, units, _total
// suffixes, help texts, histogram layout. It must have nothing to say.
func TestPromtoolCheckMetrics(t *testing.T) {
	promtool := promtest.Tool(t, "promtool")
	r := New("1.2.3")
	for _, name := range []string{"can0", "can1"} {
		c := r.AddController(name, "v"+name)
		recordKnown(c)
		c.ObserveTransfer(6, CompletionPoll, 14_400, 14)
		c.ObserveTransfer(6, CompletionSleep, 39_560, 14)
		c.RXFrames.Inc()
		c.TEC.Set(97)
		r.AddBitTiming(c, BitTiming{BitTiming: kernelTiming(t), OscillatorHz: 16_000_000, SCLKHz: 10_000_000})
	}
	r.AddSimPeers(func() []SimPeer { return []SimPeer{{Controller: "can0", Peer: "flood", Dropped: 4}} })
	r.AddSimClock(func() SimClock {
		return SimClock{Board: "pi3", Rule: "strict", Factor: 12, CoreClockHz: 4e8, ARMClockHz: 1.2e9,
			Removed: []SimRemoval{{Thread: "cpu", Category: "runqueue", Count: 3, Ns: 1_500_000}, {Thread: "bus", Category: "bus_late", Count: 1, Ns: 250_000}},
			Charged: []SimCharge{{Kind: "park", Ns: 40_000}}}
	})
	r.AddRealtime().SetRefused(SchedFIFO, true)
	text := scrapeText(t, r.Handler())

	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil || out.Len() != 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out.String())
	}
}
