package clock

import (
	"fmt"
	"sync/atomic"
	_ "unsafe" // for go:linkname

	"golang.org/x/sys/unix"

	"cand/internal/mono"
)

// The clock's view of the host: its time, and the state of the bound CPU thread
// as the kernel reports it (proc(5): /proc/[pid]/task/[tid]/stat, .../syscall
// and .../schedstat; clock_gettime(2) CLOCK_THREAD_CPUTIME_ID; getrusage(2)).

// host is what the clock reads of the machine: the real kernel (realHost), or a
// script in tests.
type host struct {
	now    func() int64 // CLOCK_MONOTONIC ns
	gettid func() int
	nvcsw  func() int64 // voluntary context switches of the calling thread
	look   func(c *Clock) byte
	// sample reads the calling (CPU) thread's CPU time, run delay and voluntary
	// switches.
	sample func(c *Clock) sample
	// others returns the CPU time of the process's threads other than the CPU
	// thread (whose own is ownExec) and the bus threads.
	others func(c *Clock, ownExec int64) int64
	// thread identifies the calling OS thread without a system call (the Go
	// runtime's M, which a goroutine locked to its thread keeps).
	thread func() uintptr
}

func realHost() host {
	return host{
		now:    mono.Now,
		gettid: unix.Gettid,
		nvcsw:  threadNvcsw,
		look:   (*Clock).procLook,
		sample: (*Clock).procSample,
		others: (*Clock).procOthers,
		thread: getm,
	}
}

// getm is the Go runtime's current M: one per OS thread, so the same for every
// call on a goroutine locked to its thread (runtime/proc.go keeps it for
// linkname, go.dev/issue/67401). A few ns, where gettid(2) is a system call.
//
//go:linkname getm runtime.getm
func getm() uintptr

func threadNvcsw() int64 {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_THREAD, &ru)
	return int64(ru.Nvcsw) // int32 on 32-bit ARM
}

// procSample reads the calling thread: its CPU time from CLOCK_THREAD_CPUTIME_ID
// (exact, and without steal on a kernel with CONFIG_PARAVIRT_TIME_ACCOUNTING),
// its run delay from the second field of its schedstat (0 without the file:
// then no runqueue time is removed, which only charges more).
func (c *Clock) procSample() sample {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	s := sample{exec: ts.Nano(), nvcsw: threadNvcsw()}
	if fd := c.schedFd.Load(); fd > 0 {
		_, s.rd = readSchedstat(int(fd - 1))
	}
	if fd := c.ioFd.Load(); fd > 0 {
		s.sys = readSyscalls(int(fd - 1))
	}
	return s
}

// readSyscalls reads an io file (CONFIG_TASK_IO_ACCOUNTING) and returns its
// syscr + syscw: the read and write system calls made (0 if unreadable).
func readSyscalls(fd int) int64 {
	var b [256]byte
	n, err := unix.Pread(fd, b[:], 0)
	if err != nil || n <= 0 {
		return 0
	}
	return sumSyscalls(b[:n])
}

// sumSyscalls returns syscr + syscw of an io file's text.
func sumSyscalls(text []byte) int64 {
	var sum int64
	for line := text; len(line) > 0; {
		if len(line) > 7 && (string(line[:7]) == "syscr: " || string(line[:7]) == "syscw: ") {
			v, _ := leadingInt(line[7:])
			sum += v
		}
		i := 0
		for i < len(line) && line[i] != '\n' {
			i++
		}
		line = line[min(i+1, len(line)):]
	}
	return sum
}

// procOthers is the process's CPU time (getrusage RUSAGE_SELF: every thread's,
// exact in sum) less ownExec and the bus threads' (their schedstat's first field).
func (c *Clock) procOthers(ownExec int64) int64 {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	n := ru.Utime.Nano() + ru.Stime.Nano() - ownExec
	for i := range c.buses.fd {
		if fd := c.buses.fd[i].Load(); fd > 0 {
			exec, _ := readSchedstat(int(fd - 1))
			n -= exec
		}
	}
	return max(n, 0)
}

// readSchedstat reads a schedstat file: "exec_ns run_delay_ns timeslices".
func readSchedstat(fd int) (exec, runDelay int64) {
	var b [96]byte
	n, err := unix.Pread(fd, b[:], 0)
	if err != nil || n <= 0 {
		return 0, 0
	}
	exec, rest := leadingInt(b[:n])
	if len(rest) > 0 {
		runDelay, _ = leadingInt(rest[1:])
	}
	return exec, runDelay
}

// leadingInt parses the decimal number at the start of b and returns it and what
// follows it.
func leadingInt(b []byte) (int64, []byte) {
	var n int64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int64(b[i]-'0')
	}
	return n, b[i:]
}

// BindCPU makes the calling thread the Pi's CPU. Call it on a goroutine locked to
// its OS thread (runtime.LockOSThread) that will make the register accesses.
func (c *Clock) BindCPU() error {
	tid := unix.Gettid()
	fd, err := unix.Open(fmt.Sprintf("/proc/self/task/%d/stat", tid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sim/clock: cannot watch the CPU thread's state: %w (is /proc mounted?)", err)
	}
	sfd, err := unix.Open(fmt.Sprintf("/proc/self/task/%d/syscall", tid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(fd)
		return fmt.Errorf("sim/clock: cannot watch the CPU thread's system calls: %w (a kernel without CONFIG_HAVE_ARCH_TRACEHOOK?)", err)
	}
	// Without schedstat (CONFIG_SCHED_INFO) the strict rule removes no runqueue
	// time: SchedstatMissing says so.
	schedFd, err := unix.Open(fmt.Sprintf("/proc/self/task/%d/schedstat", tid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		schedFd = -1
	}
	c.bind(tid, fd, sfd, schedFd)
	// Without the io file (CONFIG_TASK_IO_ACCOUNTING) every gap counts as having
	// made a system call: kernel outliers are then told by their CPU time alone.
	if iofd, err := unix.Open(fmt.Sprintf("/proc/self/task/%d/io", tid), unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
		c.ioFd.Store(int64(iofd) + 1)
	}
	return nil
}

// SchedstatMissing reports whether the bound CPU thread's run delay cannot be
// read (a kernel without CONFIG_SCHED_INFO): the strict rule then takes no
// runqueue time out of the board's.
func (c *Clock) SchedstatMissing() bool { return c.Bound() && c.schedFd.Load() <= 0 }

// UnbindCPU returns the clock to host time from now on (removals made stay). A
// bus thread looking at that moment reads the thread as gone: waiting.
func (c *Clock) UnbindCPU() {
	c.tid.Store(0)
	c.resetMeter(0)
	for _, f := range []*atomic.Int64{&c.statFd, &c.sysFd, &c.schedFd, &c.ioFd} {
		if fd := f.Swap(0); fd > 0 {
			unix.Close(int(fd - 1))
		}
	}
	for i := range c.buses.fd {
		if fd := c.buses.fd[i].Swap(0); fd > 0 {
			unix.Close(int(fd - 1))
		}
		c.buses.tid[i].Store(0)
	}
}

// procLook returns the CPU thread's state from /proc: 'R' running, runnable, in
// an uninterruptible sleep or stopped; 'F' asleep in a futex (parked by the Go
// runtime); 'S' asleep in any other system call (a wait for the hardware), or
// gone.
func (c *Clock) procLook() byte {
	fd := c.statFd.Load()
	if fd <= 0 {
		return 'S'
	}
	var b [512]byte
	n, err := unix.Pread(int(fd-1), b[:], 0)
	if err != nil || n <= 0 {
		return 'S'
	}
	switch stateOf(b[:n]) {
	case 'R', 'D', 'T', 't':
		// Running or runnable; in an uninterruptible sleep (a page fault, the
		// mmap lock: the kernel's, not a wait for the hardware, which is
		// interruptible); or stopped by a debugger: time stands still.
		return 'R'
	case 'S':
		if fd := c.sysFd.Load(); fd > 0 {
			if n, err := unix.Pread(int(fd-1), b[:], 0); err == nil {
				switch syscallOf(b[:n]) {
				case unix.SYS_FUTEX:
					return 'F'
				case -1:
					return 'R' // woke between the two reads ("running")
				}
			}
		}
	}
	return 'S'
}

// stateOf returns the state letter of a /proc stat line: "pid (comm) S ...", where
// comm may itself hold spaces and parentheses (the last ')' ends it).
func stateOf(line []byte) byte {
	for i := len(line) - 1; i >= 0; i-- {
		if line[i] == ')' {
			if i+2 < len(line) {
				return line[i+2]
			}
			return 0
		}
	}
	return 0
}

// syscallOf returns the system call number at the start of a /proc syscall line
// ("202 0x... ..."), or -1 ("running", "-1 ...", or unreadable).
func syscallOf(line []byte) int {
	n, digits := 0, 0
	for _, ch := range line {
		if ch < '0' || ch > '9' {
			break
		}
		n = n*10 + int(ch-'0')
		digits++
	}
	if digits == 0 {
		return -1
	}
	return n
}
