package deploy_test

import (
	"bytes"
	"os/exec"
	"testing"

	"cand/internal/promtest"
)

// promtool runs the Debian package prometheus's promtool with args and returns
// its output, failing the test if it exits non-zero. Without promtool the test
// is skipped, except in CI (CI=true), where a missing tool is a failure.
func promtool(t *testing.T, args ...string) string {
	t.Helper()
	path := promtest.Tool(t, "promtool")
	var out bytes.Buffer
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("promtool %q: %v\n%s", args, err, out.String())
	}
	return out.String()
}
