package daemon

import (
	"os"
	"strconv"
	"testing"

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
