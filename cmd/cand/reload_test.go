package main

import (
	"log/slog"
	"strings"
	"testing"
)

// A SIGHUP before the daemon bridges has nothing to reload into: it is logged.
func TestReloadBeforeReady(t *testing.T) {
	logged := make(lines, 4)
	r := &reloader{log: slog.New(slog.NewTextHandler(logged, nil))}
	r.reload()
	const want = `level=WARN msg="SIGHUP before cand bridges: no reload; the configuration is read as the start goes on"`
	if line := <-logged; !strings.Contains(line, want) {
		t.Fatalf("logged %q, want %q", line, want)
	}
}
