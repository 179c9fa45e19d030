package soak

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// A short soak: every frame offered in either direction is delivered or lost by a
// named cause, with the faults injected at random times (the seed is logged), and
// the run passes the soak's verdict (Report.Pass).
func TestShortSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30 s soak of the whole daemon; skipped with -short")
	}
	rep, err := Run(context.Background(), Options{Duration: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep.Print(&out)
	t.Log("\n" + out.String())
	if rep.TXUnexplained != 0 || rep.RXUnexplained != 0 {
		t.Errorf("unexplained frames: TX %d, RX %d", rep.TXUnexplained, rep.RXUnexplained)
	}
	if rep.TXWritten == 0 || rep.RXRead == 0 {
		t.Errorf("no traffic: %d TX frames written, %d RX frames read", rep.TXWritten, rep.RXRead)
	}
	if !rep.Pass() {
		t.Errorf("the soak failed: %v", rep.Problems)
	}
}
