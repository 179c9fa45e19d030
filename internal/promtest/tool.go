// Package promtest runs the tools of the Debian package prometheus for tests: a
// real Prometheus server scraping a test's metrics endpoint, queried through its
// HTTP API (https://prometheus.io/docs/prometheus/latest/querying/api/).
package promtest

import (
	"os"
	"os/exec"
	"testing"
)

// Tool returns the path of name ("prometheus", "promtool") on PATH. Without it
// the test is skipped, except in CI (CI=true), where a missing tool fails it. Call
// it from the test's own goroutine.
func Tool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found (%v): install the Debian package prometheus", name, err)
	}
	t.Skipf("%s not found: install the Debian package prometheus to run this test", name)
	return ""
}
