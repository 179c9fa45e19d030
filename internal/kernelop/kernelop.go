// Package kernelop names the system calls cand's frame-path threads make, so that
// a board model can charge each at what that kind of kernel work costs on the
// board it plays, rather than at the factor by which the board runs user code.
// Kernel work and user code do not slow down alike from one CPU to another
// (UnixBench 5.1.3's syscall, pipe and context-switch tests against its
// Dhrystone; docs/boards.md has the figures and their sources).
//
// On real hardware no Meter is set: the kernel's cost is simply paid.
package kernelop

// Op is a kind of system call.
type Op uint8

const (
	// SocketWrite: received frames written to the interface (a CAN socket's
	// write, or a pseudo-terminal's).
	SocketWrite Op = iota
	// SocketRead: one frame read from the interface's socket for TX.
	SocketRead
	// EpollLook: epoll_wait with timeout 0. A blocking epoll_wait is not
	// metered: its wake-up is charged as the board's wake-up.
	EpollLook
	// EventRead: the INT line's queued edge events read (GPIO character device).
	EventRead
	// Wake: waking another thread (an eventfd write, a futex wake).
	Wake
	// ClockRead: a clock_gettime system call, on a board whose runtime clock has
	// no vDSO.
	ClockRead
	// SimOnly: a system call the virtual Pi makes on a frame-path thread that
	// the board it plays would not make (waking the simulator's delivery thread,
	// which on the board would still be spinning): the simulator's own
	// bookkeeping, charged to nobody.
	SimOnly
	// NumOps is the number of kinds.
	NumOps
)

// String is the kind's name, as metrics and reports spell it.
func (o Op) String() string {
	switch o {
	case SocketWrite:
		return "socket_write"
	case SocketRead:
		return "socket_read"
	case EpollLook:
		return "epoll_look"
	case EventRead:
		return "event_read"
	case Wake:
		return "wake"
	case ClockRead:
		return "clock_read"
	case SimOnly:
		return "sim_only"
	}
	return "unknown"
}

// Meter is told around each metered system call, on the thread that makes it:
// Enter just before the call, Exit just after. Calls do not nest. It must not
// allocate, lock or make a system call of its own on the caller's behalf that it
// does not account for.
type Meter interface {
	Enter(op Op)
	Exit(op Op)
}
