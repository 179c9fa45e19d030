package socketcan

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// WatchLinks against the running kernel, in a fresh network namespace: the dump
// reports the links there, then `ip link set ve0 down`, `up` and `ip link del ve0`
// (a veth pair: any kernel has it; a vcan's messages are the same) arrive as
// events with the link's state. The VM tier runs it with vcan too.
func TestKernelWatchLinks(t *testing.T) {
	inNetns(t, func(skip func(reason string)) {
		err := withRoute(func(rt roundTrip) error {
			lk := &linker{rt: rt}
			if _, err := lk.ensure("ve0", "veth", "ve1", 0); err != nil {
				return err
			}
			w, err := WatchLinks()
			if err != nil {
				return err
			}
			defer w.Close()
			ctx, cancel := context.WithCancel(context.Background())
			events := make(chan LinkEvent, 64)
			ran := make(chan error, 1)
			go func() { ran <- w.Run(ctx, func(e LinkEvent) { events <- e }) }()
			defer func() {
				cancel()
				if err := <-ran; err != nil {
					t.Errorf("Run: %v", err)
				}
			}()
			// next waits for ve0's next event that matches, skipping the others
			// (lo, ve1, repeated flag messages).
			next := func(what string, match func(LinkEvent) bool) bool {
				deadline := time.After(5 * time.Second)
				for {
					select {
					case e := <-events:
						if e.Name == "ve0" && match(e) {
							return true
						}
					case <-deadline:
						t.Errorf("no event for ve0 %s within 5s", what)
						return false
					}
				}
			}
			if !next("in the dump (up)", func(e LinkEvent) bool { return e.Up() && !e.Deleted }) {
				return nil
			}
			ve0, err := lk.get("ve0")
			if err != nil {
				return err
			}
			idx := int32(ve0.Index)
			if err := lk.ack(func(seq uint32) []byte { return reqSetUp(seq, idx, false) }); err != nil {
				return err
			}
			if !next("down", func(e LinkEvent) bool { return !e.Up() && !e.Deleted && e.Index == ve0.Index }) {
				return nil
			}
			if err := lk.up("ve0"); err != nil {
				return err
			}
			if !next("up again", func(e LinkEvent) bool { return e.Up() && !e.Deleted }) {
				return nil
			}
			if err := lk.del("ve0"); err != nil {
				return err
			}
			next("deleted", func(e LinkEvent) bool { return e.Deleted })
			return nil
		})
		if errors.Is(err, unix.EOPNOTSUPP) {
			skip("kernel without veth, nothing to watch: " + err.Error())
		}
		if err != nil {
			t.Error(err)
		}
	})
}
