package caps

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// State is one thread's capability sets.
type State struct {
	Effective, Permitted, Inheritable, Bounding, Ambient Set
}

// Current returns the calling thread's sets: capget(2) for the effective,
// permitted and inheritable sets, prctl(2) PR_CAPBSET_READ and
// PR_CAP_AMBIENT_IS_SET for the bounding and ambient sets.
func Current() (State, error) {
	var st State
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return st, fmt.Errorf("caps: capget: %w", err)
	}
	st.Effective = Set(data[0].Effective) | Set(data[1].Effective)<<32
	st.Permitted = Set(data[0].Permitted) | Set(data[1].Permitted)<<32
	st.Inheritable = Set(data[0].Inheritable) | Set(data[1].Inheritable)<<32
	for c := Cap(0); c <= lastCap(); c++ {
		if r, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err == nil && r == 1 {
			st.Bounding |= Of(c)
		}
		if r, err := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, uintptr(c), 0, 0); err == nil && r == 1 {
			st.Ambient |= Of(c)
		}
	}
	return st, nil
}

// lastCap is the kernel's highest capability number (/proc/sys/kernel/cap_last_cap),
// or the headers' when it cannot be read.
func lastCap() Cap {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n >= 0 && n < 64 {
			return Cap(n)
		}
	}
	return unix.CAP_LAST_CAP
}

// Report is what Keep did.
type Report struct {
	Before State
	// Kept are the capabilities asked for that the process held: all that is
	// left in the effective and permitted sets.
	Kept Set
	// Dropped are the capabilities the process held (permitted) and no longer
	// has: gone from the effective, permitted, inheritable and ambient sets.
	Dropped Set
	// Bounding is the bounding set afterwards: Kept, or, when the process may
	// not change it (BoundingErr), what it was.
	Bounding    Set
	BoundingErr error
}

// errNotEveryThread: a binary linked with cgo has threads the Go runtime does
// not know of (syscall.AllThreadsSyscall).
var errNotEveryThread = errors.New("caps: this binary cannot change the capabilities of every thread (it is linked with cgo); build it with CGO_ENABLED=0")

// Supported is nil if Keep can change every thread: a harmless query made on
// all of them (PR_CAPBSET_READ of CAP_CHOWN).
func Supported() error {
	return allThreads(unix.SYS_PRCTL, unix.PR_CAPBSET_READ, 0, 0)
}

func allThreads(trap, a1, a2, a3 uintptr) error {
	_, _, e := syscall.AllThreadsSyscall(trap, a1, a2, a3)
	switch {
	case e == syscall.ENOTSUP:
		return errNotEveryThread
	case e != 0:
		return e
	}
	return nil
}

// Keep drops from every thread each capability not in keep: first from the
// bounding set (prctl PR_CAPBSET_DROP, which needs CAP_SETPCAP; without it the
// bounding set stays as it is and Report.BoundingErr says why), then the
// ambient set is cleared (PR_CAP_AMBIENT_CLEAR_ALL), then capset(2) leaves
// the effective and permitted sets at keep ∩ permitted and the inheritable
// set empty. What the process has dropped it cannot raise again. The error is
// for a change that did not happen; the report says what there was before.
func Keep(keep Set) (Report, error) {
	before, err := Current()
	r := Report{Before: before}
	if err != nil {
		return r, err
	}
	r.Bounding = before.Bounding
	for c := Cap(0); c <= lastCap(); c++ {
		if keep.Has(c) || !before.Bounding.Has(c) {
			continue
		}
		if err := allThreads(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0); err != nil {
			if errors.Is(err, errNotEveryThread) {
				return r, err
			}
			r.BoundingErr = fmt.Errorf("caps: dropping %s from the bounding set: %w (needs CAP_SETPCAP; the service manager's CapabilityBoundingSet= bounds it instead)", c, err)
			break
		}
		r.Bounding &^= Of(c)
	}
	if err := allThreads(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		// EINVAL: a kernel before 4.3, without ambient capabilities.
		return r, fmt.Errorf("caps: clearing the ambient set: %w", err)
	}
	kept := keep & before.Permitted
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	data := [2]unix.CapUserData{
		{Effective: uint32(kept), Permitted: uint32(kept)},
		{Effective: uint32(kept >> 32), Permitted: uint32(kept >> 32)},
	}
	if err := allThreads(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); err != nil {
		return r, fmt.Errorf("caps: capset: %w", err)
	}
	r.Kept = kept
	r.Dropped = before.Permitted &^ kept
	return r, nil
}
