package metrics_test

import (
	"fmt"
	"time"

	"cand/mcp2515"
	"cand/metrics"
)

// The owner thread records with the stamps it already has; nothing here
// allocates, locks or makes a system call.
func Example() {
	reg := metrics.New("v0.1.0")           // at start-up
	c := reg.AddController("can0", "can0") // once per controller, before the frame path runs
	// go reg.Serve(ctx, "127.0.0.1:9108")

	// On the frame path (edge and now would come from the GPIO event and mono.Now()):
	var edge, now int64 = 1_000_000, 1_012_500
	c.RXEndToEnd.ObserveSpan(edge, now)
	c.ObserveTransfer(mcp2515.OpReadRxBuf, metrics.CompletionPoll, 14_400, 14)
	c.RXFrames.Inc()
	c.RXBytes.Add(8)

	fmt.Println(c.RXEndToEnd.Max(), c.RXEndToEnd.Quantile(0.99) >= 12500*time.Nanosecond, c.SPIBytes.Load())
	// Output: 12.5µs true 14
}
