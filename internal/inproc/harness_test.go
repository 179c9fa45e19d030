package inproc

import (
	"context"
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Start hands the run function the daemon's ends (-1 where the daemon makes its
// own), returns once it is ready, and Stop cancels it and returns what it
// returned; the caller's ends carry records to the daemon's.
func TestStartStop(t *testing.T) {
	var got []int
	h, err := Start(context.Background(), Options{Controllers: 2, NoSocket: func(i int) bool { return i == 1 }, Metrics: true},
		func(ctx context.Context, e Env[string]) error {
			got = e.Sockets
			if e.Metrics == nil {
				return errors.New("no metrics listener")
			}
			e.Ready("ready")
			<-ctx.Done()
			e.Metrics.Close()
			return errors.New("stopped")
		})
	if err != nil {
		t.Fatal(err)
	}
	if h.D != "ready" || len(h.Host) != 2 || h.Host[1] != -1 || len(got) != 2 || got[1] != -1 || got[0] < 0 {
		t.Fatalf("ready %q, host ends %v, daemon ends %v", h.D, h.Host, got)
	}
	if _, err := unix.Write(h.Host[0], []byte("frame")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 16)
	if n, err := unix.Read(got[0], b); err != nil || string(b[:n]) != "frame" {
		t.Fatalf("daemon end read %q, %v", b[:n], err)
	}
	if ok, err := h.Close(); !ok || err == nil || err.Error() != "stopped" {
		t.Fatalf("Close: %v, %v; want the run's error", ok, err)
	}
	if ok, err := h.Stop(); !ok || err.Error() != "stopped" {
		t.Fatalf("Stop again: %v, %v", ok, err)
	}
	if h.Host != nil {
		t.Errorf("host ends %v after Close", h.Host)
	}
}

// A daemon that returns before it is ready is an error naming what it returned.
func TestExitBeforeReady(t *testing.T) {
	_, err := Start(context.Background(), Options{Controllers: 1}, func(context.Context, Env[int]) error {
		return errors.New("bad config")
	})
	if err == nil || !strings.Contains(err.Error(), "bad config") {
		t.Fatalf("err = %v, want the daemon's error", err)
	}
}

// Exited reports a daemon that stopped by itself, and one that still runs.
func TestExited(t *testing.T) {
	quit := make(chan struct{})
	h, err := Start(context.Background(), Options{}, func(ctx context.Context, e Env[int]) error {
		e.Ready(1)
		select {
		case <-quit:
		case <-ctx.Done():
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := h.Exited(0); ok {
		t.Fatal("Exited while the daemon runs")
	}
	close(quit)
	if ok, err := h.Exited(StopTimeout); !ok || err != nil {
		t.Fatalf("Exited: %v, %v", ok, err)
	}
}
