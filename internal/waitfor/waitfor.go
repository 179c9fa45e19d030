// Package waitfor is the tests' one way to wait for something that happens on
// another thread: poll a condition until it holds, failing the test at a
// deadline, rather than sleep a fixed time.
package waitfor

import (
	"testing"
	"time"
)

// Every is how often Cond polls.
const Every = time.Millisecond

// Cond polls cond every millisecond until it holds, and fails the test (Fatal) if
// it does not within d; what names the awaited event in the failure.
func Cond(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Until(d, cond) {
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
}

// Until polls cond every millisecond until it holds or d passes, and reports
// whether it held: for a test that fails its own way, or from a goroutine that
// must not call Fatal.
func Until(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(Every)
	}
	return true
}
