package bridge

import (
	"context"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cand/internal/waitfor"
)

// Apply runs its function on the owner thread while the loop runs, and refuses
// before and after.
func TestApplyRunsOnTheOwnerThread(t *testing.T) {
	var o Owner
	if o.Apply(func() { t.Error("ran before Run") }) {
		t.Fatal("Apply before Run reported true")
	}
	tid := make(chan int, 1)
	o.Setup = func() error { tid <- unix.Gettid(); return nil }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	owner := <-tid
	waitfor.Cond(t, 5*time.Second, "the owner loop's eventfd", func() bool { return o.ctlFd.Load() != 0 })
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ran []int
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !o.Apply(func() { mu.Lock(); ran = append(ran, unix.Gettid()); mu.Unlock() }) {
				t.Error("Apply while running reported false")
			}
		}()
	}
	wg.Wait()
	if len(ran) != 8 {
		t.Fatalf("%d of 8 requests ran", len(ran))
	}
	for _, tid := range ran {
		if tid != owner {
			t.Fatalf("ran on thread %d, the owner thread is %d", tid, owner)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if o.Apply(func() { t.Error("ran after Run") }) {
		t.Fatal("Apply after Run reported true")
	}
}

// An Apply posted while Setup runs (cand reports itself ready from Setup, and a
// reload may come at once) is taken: it runs once the loop does, rather than being
// refused as "not running".
func TestApplyDuringSetupRunsOnceTheLoopDoes(t *testing.T) {
	var o Owner
	setup := make(chan struct{})
	o.Setup = func() error {
		close(setup)
		waitfor.Until(5*time.Second, func() bool { return o.apply.pending.Load() != nil }) // the posted request
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	<-setup
	ran := false
	if !o.Apply(func() { ran = true }) || !ran {
		t.Fatal("Apply posted during Setup was refused")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
