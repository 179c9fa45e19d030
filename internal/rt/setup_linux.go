package rt

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DefaultPriority is the owner thread's SCHED_FIFO priority unless configured.
const DefaultPriority = 40

// cpuSetSize is the number of CPUs a unix.CPUSet holds (glibc's CPU_SETSIZE, 1024).
const cpuSetSize = int(unsafe.Sizeof(unix.CPUSet{})) * 8

// irqThreadPriority is the SCHED_FIFO priority of the kernel's threaded IRQ handlers.
const irqThreadPriority = 50

// Config is what Setup applies to the calling thread (and, for Mlockall, the process).
type Config struct {
	// Priority is the SCHED_FIFO priority 1..99; 0 leaves normal scheduling.
	Priority int
	// CPU pins the thread to one CPU; -1 leaves it free.
	CPU int
	// Mlockall locks all current and future memory of the process.
	Mlockall bool
	// Require makes any refusal an error (realtime.required); otherwise refusals
	// are reported and the thread runs without the refused item.
	Require bool
	// Thread names the thread in the report ("" = "owner thread"), and CPUKey
	// the configuration key its CPU comes from ("" = "realtime.cpu").
	Thread, CPUKey string
}

// The parts of the setup, as Item.What names them.
const (
	Priority = "priority" // SCHED_FIFO
	Affinity = "affinity" // the CPU pin
	Mlockall = "mlockall"
)

// Item is the outcome of one part of the setup.
type Item struct {
	What    string // Priority, Affinity or Mlockall
	Applied bool   // the setting is in effect (false also when not requested)
	Err     error  // why it was refused; nil if applied or not requested
	// Cause, for a refused item, says what was refused, why, and what would
	// allow it.
	Cause string
	Line  string // the log line: for a refused item, Cause and how cand runs without it
}

// Report lists one Item per part of the setup, in the order applied.
type Report struct {
	Tid   int // the thread Setup ran on
	Items []Item
}

// Lines returns the report's log lines.
func (r Report) Lines() []string {
	out := make([]string, len(r.Items))
	for i, it := range r.Items {
		out[i] = it.Line
	}
	return out
}

// String is the report's lines joined by newlines.
func (r Report) String() string { return strings.Join(r.Lines(), "\n") }

// Refused returns the items that were requested but not applied.
func (r Report) Refused() []Item {
	var out []Item
	for _, it := range r.Items {
		if it.Err != nil {
			out = append(out, it)
		}
	}
	return out
}

// Setup applies cfg to the calling OS thread; see the package documentation for the
// conditions. A configuration out of range is always an error. A refusal by the kernel
// is an error only with cfg.Require; the Report carries a line for every item either
// way, for the caller to log.
func Setup(cfg Config) (Report, error) {
	if cfg.Priority < 0 || cfg.Priority > 99 {
		return Report{}, fmt.Errorf("rt: realtime.priority %d out of range: use 1..99 for SCHED_FIFO or 0 for normal scheduling", cfg.Priority)
	}
	if cfg.CPU < -1 || cfg.CPU >= cpuSetSize {
		return Report{}, fmt.Errorf("rt: realtime.cpu %d out of range: use a CPU number from 0 or -1 for no pinning", cfg.CPU)
	}
	r := Report{Tid: unix.Gettid()}
	thread, key := cfg.Thread, cfg.CPUKey
	if thread == "" {
		thread = "owner thread"
	}
	if key == "" {
		key = "realtime.cpu"
	}
	r.Items = append(r.Items, setPriority(thread, cfg.Priority), setAffinity(thread, key, cfg.CPU))
	if cfg.Mlockall {
		r.Items = append(r.Items, lockMemory())
	}
	if refused := r.Refused(); cfg.Require && len(refused) > 0 {
		causes := make([]string, len(refused))
		for i, it := range refused {
			causes[i] = it.Cause
		}
		return r, fmt.Errorf("rt: realtime.required is true, but %s (or set realtime.required: false to start without)", strings.Join(causes, "; and "))
	}
	return r, nil
}

// refused is the Item of a part the kernel refused: cause says what and how to
// allow it, without how cand runs without it.
func refused(what string, err error, cause, without string) Item {
	return Item{What: what, Err: err, Cause: cause, Line: cause + "; " + without}
}

func setPriority(thread string, prio int) Item {
	if prio == 0 {
		return Item{What: Priority, Line: thread + ": normal scheduling (realtime.priority 0)"}
	}
	attr := unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: uint32(prio)}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		return priorityRefused(thread, prio, err)
	}
	line := fmt.Sprintf("%s: SCHED_FIFO priority %d set", thread, prio)
	if prio >= irqThreadPriority {
		line += fmt.Sprintf(" (warning: at or above the kernel's IRQ threads (%d), which deliver the GPIO edges: a busy owner thread delays its own interrupts; %d is advised)",
			irqThreadPriority, DefaultPriority)
	}
	return Item{What: Priority, Applied: true, Line: line}
}

// priorityRefused: an unprivileged thread may use SCHED_FIFO up to its
// RLIMIT_RTPRIO, beyond it only with CAP_SYS_NICE; a cgroup without real-time
// runtime refuses it even to root (sched_setscheduler(2), kernel/sched/core.c).
func priorityRefused(thread string, prio int, err error) Item {
	fix := ""
	switch {
	case errors.Is(err, unix.EPERM):
		fix = fmt.Sprintf(": needs CAP_SYS_NICE or an RLIMIT_RTPRIO of %d or more (systemd: AmbientCapabilities=CAP_SYS_NICE or LimitRTPRIO=%d), and a cgroup with real-time runtime", prio, prio)
	case errors.Is(err, unix.EINVAL):
		fix = ": the kernel does not accept this policy or priority"
	}
	return refused(Priority, err, fmt.Sprintf("%s: SCHED_FIFO %d refused (%s)%s", thread, prio, errnoName(err), fix), "running with normal scheduling")
}

func setAffinity(thread, key string, cpu int) Item {
	if cpu < 0 {
		return Item{What: Affinity, Line: fmt.Sprintf("%s: not pinned to a CPU (%s -1)", thread, key)}
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return affinityRefused(thread, key, cpu, err)
	}
	return Item{What: Affinity, Applied: true, Line: fmt.Sprintf("%s: pinned to CPU %d", thread, cpu)}
}

func affinityRefused(thread, key string, cpu int, err error) Item {
	fix := ""
	switch {
	case errors.Is(err, unix.EINVAL):
		fix = fmt.Sprintf(": CPU %d is offline, absent or outside this process's cpuset; choose another %s", cpu, key)
	case errors.Is(err, unix.EPERM):
		fix = ": needs CAP_SYS_NICE"
	}
	return refused(Affinity, err, fmt.Sprintf("%s: pinning to CPU %d refused (%s)%s", thread, cpu, errnoName(err), fix), "running unpinned")
}

func lockMemory() Item {
	if err := unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE); err != nil {
		return mlockallRefused(err)
	}
	return Item{What: Mlockall, Applied: true, Line: "process: memory locked (mlockall MCL_CURRENT|MCL_FUTURE)"}
}

// mlockallRefused: without CAP_IPC_LOCK, mlockall fails with EPERM when
// RLIMIT_MEMLOCK is 0 and with ENOMEM when the process is larger (mlockall(2)).
func mlockallRefused(err error) Item {
	fix := ""
	switch {
	case errors.Is(err, unix.ENOMEM):
		fix = ": RLIMIT_MEMLOCK is too small: set LimitMEMLOCK=infinity or give CAP_IPC_LOCK"
	case errors.Is(err, unix.EPERM):
		fix = ": needs CAP_IPC_LOCK or an RLIMIT_MEMLOCK above the process's size (systemd: LimitMEMLOCK=infinity)"
	}
	return refused(Mlockall, err, fmt.Sprintf("process: mlockall refused (%s)%s", errnoName(err), fix), "page faults may add latency")
}

// errnoName is "EPERM" for unix.EPERM, or the error's text for anything else.
func errnoName(err error) string {
	var e unix.Errno
	if errors.As(err, &e) {
		if n := unix.ErrnoName(e); n != "" {
			return n
		}
	}
	return err.Error()
}
