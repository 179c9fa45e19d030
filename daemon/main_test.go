package daemon

import (
	"os"
	"testing"
)

// TestMain runs the tests, or, in this test binary run again by a test, that
// test's helper process (TestMetricsUnderLoad's scrapers).
func TestMain(m *testing.M) {
	if spec := os.Getenv(scraperAddr); spec != "" {
		runScrapers(spec)
	}
	os.Exit(m.Run())
}
