package daemon

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cand/config"
)

// TestThreadsNameTheFramePathThreads checks that Daemon.Threads gives the owner
// thread's and the delivery thread's IDs: two threads of this process, neither
// the test's; with realtime.delivery owner there is no delivery thread.
func TestThreadsNameTheFramePathThreads(t *testing.T) {
	for _, tc := range []struct {
		delivery     config.Delivery
		wantDelivery bool
	}{{config.DeliveryThread, true}, {config.DeliveryOwner, false}} {
		t.Run(string(tc.delivery), func(t *testing.T) {
			r := newRigConfig(t).board(config.SimBoardPi4).delivery(tc.delivery).start()
			th := r.d.Threads()
			self := unix.Gettid()
			alive := func(tid int) bool {
				_, err := os.Stat("/proc/self/task/" + strconv.Itoa(tid))
				return err == nil
			}
			if th.Owner == 0 || th.Owner == self || !alive(th.Owner) {
				t.Errorf("Threads().Owner = %d: want a thread of this process other than the test's (%d)", th.Owner, self)
			}
			switch {
			case !tc.wantDelivery && th.Delivery != 0:
				t.Errorf("Threads().Delivery = %d with realtime.delivery owner, want 0", th.Delivery)
			case tc.wantDelivery && (th.Delivery == 0 || th.Delivery == th.Owner || th.Delivery == self || !alive(th.Delivery)):
				t.Errorf("Threads() = %+v: want a delivery thread of its own (test %d)", th, self)
			}
		})
	}
}

// The delivery thread's counts reach the registry: after a run with a delivery
// thread, the exported counters are the thread's own counts, and the frames it
// and the owner wrote are the frames read from the socket; without one
// (realtime.delivery: owner) the series are absent.
func TestDeliveryCountsExported(t *testing.T) {
	for _, tc := range []struct {
		delivery config.Delivery
		exported bool
	}{{config.DeliveryThread, true}, {config.DeliveryOwner, false}} {
		t.Run(string(tc.delivery), func(t *testing.T) {
			r := newRigConfig(t).board(config.SimBoardPi4).delivery(tc.delivery).peer(periodicPeer("tick", 2*time.Millisecond, 8, 0x123)).start()
			for i := range 50 {
				if _, _, err := r.read(0, 5*time.Second); err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
			}
			r.stop()
			names := gatheredNames(t, r.d)
			if !tc.exported {
				for n := range names {
					if strings.HasPrefix(n, "cand_delivery_") {
						t.Errorf("%s exported without a delivery thread", n)
					}
				}
				return
			}
			s := r.d.Owner.Delivery.Stats()
			t.Logf("delivery %+v", s)
			for name, want := range map[string]uint64{
				"cand_delivery_wakes_total": s.Wakes, "cand_delivery_parks_total": s.Parks,
				"cand_delivery_batches_total": s.Batches, "cand_delivery_frames_total": s.Frames,
				"cand_delivery_isolated_total": s.Isolated,
			} {
				if got := gathered(t, r.d, name); got != float64(want) {
					t.Errorf("%s = %v, want the thread's %d", name, got, want)
				}
			}
			if s.Frames+s.Isolated < 50 {
				t.Errorf("the thread wrote %d and the owner %d records; 50 frames were read", s.Frames, s.Isolated)
			}
		})
	}
}

// gatheredNames are the metric names in the daemon's registry.
func gatheredNames(t *testing.T, d *Daemon) map[string]bool {
	t.Helper()
	mfs, err := d.Metrics.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	return names
}
