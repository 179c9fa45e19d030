package main

import (
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lines is a log destination that hands each record to the test.
type lines chan string

func (l lines) Write(p []byte) (int, error) {
	l <- string(p)
	return len(p), nil
}

// SIGHUP reloads (and is logged): cand keeps running. SIGTERM ends the run's
// context.
func TestSignalsHangupReloadsTermStops(t *testing.T) {
	logged := make(lines, 16)
	reloads := make(chan struct{}, 4)
	ctx, stop := signals(slog.New(slog.NewTextHandler(logged, nil)), func() { reloads <- struct{}{} })
	defer stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	const want = `level=INFO msg="SIGHUP: reloading the configuration"`
	select {
	case line := <-logged:
		if !strings.Contains(line, want) {
			t.Fatalf("logged %q, want %q", line, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no log line %q within 5s", want)
	}
	select {
	case <-reloads:
	case <-time.After(5 * time.Second):
		t.Fatal("SIGHUP did not reload within 5s")
	}
	if ctx.Err() != nil {
		t.Fatal("SIGHUP ended the run")
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("SIGTERM did not end the run within 5s")
	}
}
