package bridge

import (
	"sync"
	"sync/atomic"
)

// request is a function the owner thread runs between two loop turns.
type request struct {
	fn   func()
	done chan bool // true once fn ran; false if the owner thread stopped first
}

// applier is Owner.Apply's state: the one request waiting, and the callers'
// turn-taking (never on the owner thread).
type applier struct {
	mu      sync.Mutex
	pending atomic.Pointer[request]
}

// Apply runs fn on the owner thread between two loop turns and returns once it
// has run: the way to change what the owner thread owns (a port's settings, its
// chip's configuration) without a lock on the frame path, which only looks at an
// atomic pointer once per turn. It returns false without running fn if the owner
// thread is not running or stops first. Calls from several goroutines take turns.
func (o *Owner) Apply(fn func()) bool {
	a := &o.apply
	a.mu.Lock()
	defer a.mu.Unlock()
	r := &request{fn: fn, done: make(chan bool, 1)}
	a.pending.Store(r)
	if o.ctlFd.Load() == 0 {
		if a.pending.CompareAndSwap(r, nil) {
			return false // not running: nobody will take it
		}
		return <-r.done // taken meanwhile: run, or refused at the owner's exit
	}
	o.kick()
	return <-r.done
}

// applyPending runs the request Apply posted, if any (owner thread, between turns).
func (o *Owner) applyPending() {
	if o.apply.pending.Load() == nil {
		return
	}
	if r := o.apply.pending.Swap(nil); r != nil {
		r.fn()
		r.done <- true
	}
}

// refusePending answers a request posted as the owner thread stops: not run. It
// comes after the control eventfd is marked closed, so a later Apply sees that.
func (o *Owner) refusePending() {
	if r := o.apply.pending.Swap(nil); r != nil {
		r.done <- false
	}
}
