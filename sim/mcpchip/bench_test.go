package mcpchip

import (
	"testing"

	"go.einride.tech/can"

	"cand/mcp2515"
)

// BenchmarkExchange is the cost of one SPI byte through the model (READ STATUS).
func BenchmarkExchange(b *testing.B) {
	r := newRig(&testing.T{}, nil)
	r.c.SetCS(true, r.at)
	r.c.Exchange(mcp2515.InstrReadStatus, 0, sclk, r.at)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.at += byteNs
		r.c.Exchange(0, 0, sclk, r.at)
	}
}

// BenchmarkReceiveFrame is one frame from a peer into RXB0 and out through READ RX
// BUFFER (14 bytes): the model's cost per received frame.
func BenchmarkReceiveFrame(b *testing.B) {
	t := &testing.T{}
	r, _, ps := busRig(t, listener("a"))
	r.setup500k(mcp2515.ModeNormal)
	r.c.OnINT(func(bool, int64) {})
	f := can.Frame{ID: 0x10, Length: 8}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ps[0].Send(f)
		r.at += 300_000
		r.c.Level(r.at)
		r.c.SetCS(true, r.at)
		for j := 0; j < 14; j++ {
			r.at += byteNs
			r.c.Exchange(mcp2515.InstrReadRxBuf, 0, sclk, r.at)
		}
		r.c.SetCS(false, r.at)
	}
}
