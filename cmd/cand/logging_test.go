package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// journalStderr is a file in dir that JOURNAL_STREAM names, as systemd names
// the stream it connected a service's stderr to.
func journalStderr(t *testing.T, dir string) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	t.Setenv("JOURNAL_STREAM", fmt.Sprintf("%d:%d", st.Dev, st.Ino))
	return f
}

// With stderr the journal (JOURNAL_STREAM names it), records go to the
// journal's socket as native entries, rate-limited; otherwise they are text on
// stderr.
func TestLoggerJournalOrText(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "socket")
	j, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	stderr := journalStderr(t, dir)

	log, done := logger(stderr, slog.LevelInfo, sock)
	for range logBurst + 2 {
		log.Warn("chip lost", "controller", "can0")
	}
	done() // the summary of the two suppressed
	buf := make([]byte, 4096)
	var entries []string
	for range logBurst + 1 {
		j.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := j.Read(buf)
		if err != nil {
			t.Fatalf("after %d entries: %v", len(entries), err)
		}
		entries = append(entries, string(buf[:n]))
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
	dir := t.TempDir()
	stderr := journalStderr(t, dir)
	log, done := logger(stderr, slog.LevelInfo, filepath.Join(dir, "no-socket"))
	log.Info("bridging")
	done()
	b, _ := os.ReadFile(stderr.Name())
	if !strings.Contains(string(b), `msg="stderr is the journal, but its socket is not reachable: logging text to stderr"`) || !strings.Contains(string(b), "msg=bridging") {
		t.Errorf("stderr %q", b)
	}
}
