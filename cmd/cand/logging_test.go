package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cand/internal/journal/journaltest"
)

// With stderr the journal (JOURNAL_STREAM names it), records go to the
// journal's socket as native entries, rate-limited; otherwise they are text on
// stderr.
func TestLoggerJournalOrText(t *testing.T) {
	sock, j := journaltest.Socket(t)
	stderr := journaltest.Stream(t)

	log, done := logger(stderr, slog.LevelInfo, sock)
	for range logBurst + 2 {
		log.Warn("chip lost", "controller", "can0")
	}
	done() // the summary of the two suppressed
	var entries []string
	for range logBurst + 1 {
		e, viaMemfd := journaltest.Receive(t, j)
		if viaMemfd {
			t.Errorf("entry %d, a small one, came through a memfd", len(entries))
		}
		entries = append(entries, string(e))
	}
	for i, e := range entries {
		msg := "MESSAGE=chip lost\n"
		if i == logBurst {
			msg = "MESSAGE=suppressed 2 similar messages\n"
		}
		if !strings.HasPrefix(e, msg+"PRIORITY=4\nSYSLOG_IDENTIFIER=cand\n") || !strings.Contains(e, "\nCONTROLLER=can0\n") {
			t.Errorf("entry %d:\n%s", i, e)
		}
	}
	if b, _ := os.ReadFile(stderr.Name()); len(b) != 0 {
		t.Errorf("stderr got %q while the journal is there", b)
	}

	t.Setenv("JOURNAL_STREAM", "")
	var text bytes.Buffer
	log, done = logger(&text, slog.LevelInfo, sock)
	log.Info("bridging", "controllers", 1)
	done()
	if got := text.String(); !strings.Contains(got, "level=INFO msg=bridging controllers=1\n") {
		t.Errorf("text log %q", got)
	}
}

// JOURNAL_STREAM names stderr but journald's socket is gone: text, and a
// warning saying so.
func TestLoggerJournalUnreachable(t *testing.T) {
	stderr := journaltest.Stream(t)
	log, done := logger(stderr, slog.LevelInfo, filepath.Join(t.TempDir(), "no-socket"))
	log.Info("bridging")
	done()
	b, _ := os.ReadFile(stderr.Name())
	if !strings.Contains(string(b), `msg="stderr is the journal, but its socket is not reachable: logging text to stderr"`) || !strings.Contains(string(b), "msg=bridging") {
		t.Errorf("stderr %q", b)
	}
}
