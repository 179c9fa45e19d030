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
	// Require makes any refusal an error; otherwise refusals are reported and the
	// thread runs without the refused item.
	Require bool
}

// Item is the outcome of one part of the setup.
type Item struct {
	What    string // "priority", "affinity" or "mlockall"
	Applied bool   // the setting is in effect (false also when not requested)
	Err     error  // why it was refused; nil if applied or not requested
	Line    string // the log line
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
	r.Items = append(r.Items, setPriority(cfg.Priority), setAffinity(cfg.CPU))
	if cfg.Mlockall {
		r.Items = append(r.Items, lockMemory())
	}
	if refused := r.Refused(); cfg.Require && len(refused) > 0 {
		msgs := make([]string, len(refused))
		for i, it := range refused {
			msgs[i] = it.Line
		}
		return r, fmt.Errorf("rt: real-time setup required (realtime.require) but refused: %s", strings.Join(msgs, "; "))
	}
	return r, nil
}

func setPriority(prio int) Item {
	if prio == 0 {
		return Item{What: "priority", Line: "owner thread: normal scheduling (realtime.priority 0)"}
	}
	attr := unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: uint32(prio)}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		return Item{What: "priority", Err: err, Line: priorityRefused(prio, err)}
	}
	line := fmt.Sprintf("owner thread: SCHED_FIFO priority %d set", prio)
	if prio >= irqThreadPriority {
		line += fmt.Sprintf(" (warning: at or above the kernel's IRQ threads (%d), which deliver the GPIO edges: a busy owner thread delays its own interrupts; %d is advised)",
			irqThreadPriority, DefaultPriority)
	}
	return Item{What: "priority", Applied: true, Line: line}
}

func priorityRefused(prio int, err error) string {
	fix := ""
	switch {
	case errors.Is(err, unix.EPERM):
		fix = ": needs CAP_SYS_NICE or LimitRTPRIO="
	case errors.Is(err, unix.EINVAL):
		fix = ": the kernel does not accept this policy or priority"
	}
	return fmt.Sprintf("owner thread: SCHED_FIFO %d refused (%s)%s; running with normal scheduling", prio, errnoName(err), fix)
}

func setAffinity(cpu int) Item {
	if cpu < 0 {
		return Item{What: "affinity", Line: "owner thread: not pinned to a CPU (realtime.cpu -1)"}
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return Item{What: "affinity", Err: err, Line: affinityRefused(cpu, err)}
	}
	return Item{What: "affinity", Applied: true, Line: fmt.Sprintf("owner thread: pinned to CPU %d", cpu)}
}

func affinityRefused(cpu int, err error) string {
	fix := ""
	switch {
	case errors.Is(err, unix.EINVAL):
		fix = fmt.Sprintf(": CPU %d is offline, absent or outside this process's cpuset; choose another realtime.cpu", cpu)
	case errors.Is(err, unix.EPERM):
		fix = ": needs CAP_SYS_NICE"
	}
	return fmt.Sprintf("owner thread: pinning to CPU %d refused (%s)%s; running unpinned", cpu, errnoName(err), fix)
}

func lockMemory() Item {
	if err := unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE); err != nil {
		return Item{What: "mlockall", Err: err, Line: mlockallRefused(err)}
	}
	return Item{What: "mlockall", Applied: true, Line: "process: memory locked (mlockall MCL_CURRENT|MCL_FUTURE)"}
}

func mlockallRefused(err error) string {
	fix := ""
	switch {
	case errors.Is(err, unix.ENOMEM):
		fix = ": RLIMIT_MEMLOCK is too small: set LimitMEMLOCK=infinity or give CAP_IPC_LOCK"
	case errors.Is(err, unix.EPERM):
		fix = ": needs CAP_IPC_LOCK"
	}
	return fmt.Sprintf("process: mlockall refused (%s)%s; page faults may add latency", errnoName(err), fix)
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
