// Package caps drops Linux capabilities (capabilities(7)) from every thread of
// the process, keeping only those named. Capabilities are per thread in Linux
// and a Go process has many threads, so each change is made on all of them at
// once (syscall.AllThreadsSyscall, which stops the world and runs the system
// call on every thread the runtime knows; it refuses in a binary linked with
// cgo). Threads made afterwards inherit the reduced sets.
package caps

import (
	"fmt"
	"strings"
)

// Cap is a capability number (linux/capability.h).
type Cap uint

// The capabilities cand's set-up uses (linux/capability.h).
const (
	SETPCAP   Cap = 8  // change the bounding set
	NET_ADMIN Cap = 12 // rtnetlink link changes, SO_RCVBUFFORCE/SO_SNDBUFFORCE
	IPC_LOCK  Cap = 14 // mlock beyond RLIMIT_MEMLOCK
	SYS_RAWIO Cap = 17 // open /dev/mem
	SYS_NICE  Cap = 23 // SCHED_FIFO, CPU affinity
)

// names are linux/capability.h's names, by number.
var names = [...]string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE",
	"CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
	"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE", "CAP_SYS_PACCT",
	"CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE", "CAP_SYS_TIME",
	"CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL",
	"CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
}

func (c Cap) String() string {
	if int(c) < len(names) {
		return names[c]
	}
	return fmt.Sprintf("CAP_%d", uint(c))
}

// Set is a set of capabilities, bit c for Cap c: the layout of the kernel's
// sets and of /proc/PID/status's CapEff, CapPrm, ... lines.
type Set uint64

// Of is the set of cs.
func Of(cs ...Cap) Set {
	var s Set
	for _, c := range cs {
		s |= 1 << c
	}
	return s
}

// Has reports whether c is in s.
func (s Set) Has(c Cap) bool { return c < 64 && s&(1<<c) != 0 }

// Caps lists s in increasing order.
func (s Set) Caps() []Cap {
	var out []Cap
	for c := Cap(0); c < 64; c++ {
		if s.Has(c) {
			out = append(out, c)
		}
	}
	return out
}

// String names the capabilities of s, "none" for the empty set.
func (s Set) String() string {
	if s == 0 {
		return "none"
	}
	var out []string
	for _, c := range s.Caps() {
		out = append(out, c.String())
	}
	return strings.Join(out, ",")
}
