package daemon

import "sync/atomic"

// Threads are the OS thread IDs (gettid) of the frame path: the owner thread,
// which runs every port's chip and socket, and the delivery thread that writes
// received frames to the sockets. 0: not started (Delivery: there is none,
// realtime.delivery gives the owner the writes).
type Threads struct {
	Owner    int
	Delivery int
}

// threadIDs keeps each thread's ID as rt.Setup reports it, set on the thread
// itself before the daemon is ready.
type threadIDs struct {
	owner, delivery atomic.Int64
}

// Threads returns the frame path's thread IDs, known once Options.Ready has
// been called. Safe from any goroutine.
func (d *Daemon) Threads() Threads {
	return Threads{Owner: int(d.threads.owner.Load()), Delivery: int(d.threads.delivery.Load())}
}
