package bcm2835

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadSleep blocks the calling OS thread for d with nanosleep(2). An interrupted
// sleep (EINTR, e.g. the runtime's preemption signal) just returns early: the
// caller polls after sleeping anyway.
func threadSleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	_ = unix.Nanosleep(&ts, nil)
}
