package waitfor

import (
	"sync/atomic"
	"testing"
	"time"
)

// Until returns as soon as the condition holds, and false once the time is up.
func TestUntil(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 3 {
			n.Add(1)
		}
	}()
	if !Until(10*time.Second, func() bool { return n.Load() == 3 }) {
		t.Fatal("the counter reached 3, Until said it did not")
	}
	start := time.Now()
	if Until(20*time.Millisecond, func() bool { return false }) {
		t.Fatal("a condition that never holds held")
	}
	if since := time.Since(start); since < 20*time.Millisecond {
		t.Errorf("Until gave up after %v, before its 20ms", since)
	}
}
