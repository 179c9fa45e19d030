package main

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a log destination the signal goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// SIGHUP is logged and ignored: cand keeps running. SIGTERM ends the run's context.
func TestSignalsHangupIgnoredTermStops(t *testing.T) {
	var out syncBuffer
	ctx, stop := signals(slog.New(slog.NewTextHandler(&out, nil)))
	defer stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	const line = `level=WARN msg="SIGHUP: configuration reload is not supported yet; ignoring"`
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), line) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line %q within 5s; log:\n%s", line, out.String())
		}
		time.Sleep(time.Millisecond)
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
