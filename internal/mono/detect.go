package mono

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Whether Now is a system call here. Go's runtime reads CLOCK_MONOTONIC through
// the vDSO's __vdso_clock_gettime when the kernel gives the process one and
// exports it, and otherwise makes the clock_gettime system call on every read
// (runtime/vdso_linux_arm.go, sys_linux_arm.s). On a Raspberry Pi the vDSO can
// only read the ARM Generic Timer (clocksource arch_sys_counter). Detect checks,
// from files a fake root can stand in for:
//
//  1. /proc/self/auxv has AT_SYSINFO_EHDR: the kernel mapped a vDSO at all. An
//     ARMv6 kernel (Pi 1, Zero) has none (arch/arm/mm/Kconfig: VDSO depends on
//     CPU_V7); nor has a 64-bit kernel built without the 32-bit compat vDSO, for a
//     32-bit process.
//  2. A 32-bit ARM kernel removes clock_gettime from its vDSO when the device
//     tree has no arm,armv7-timer or arm,armv8-timer node, or marks it
//     arm,cpu-registers-not-fw-configured (arch/arm/kernel/vdso.c,
//     cntvct_functional and patch_vdso). Raspberry Pi device trees for the BCM2711
//     did until January 2025 (https://github.com/raspberrypi/linux/issues/6601,
//     fixed by https://github.com/raspberrypi/linux/pull/6602).
//  3. The current clocksource is arch_sys_counter: the vDSO falls back to the
//     system call when the clocksource has no vDSO clock mode (lib/vdso/
//     gettimeofday.c), as the BCM2835 System Timer's ("timer",
//     drivers/clocksource/bcm2835_timer.c) has not.
//
// A missing file leaves the question open; then the timing of a clock read
// against a null system call (MeasureCost) decides.

// Files Detect reads, relative to its root.
const (
	pathAuxv        = "proc/self/auxv"
	pathClocksource = "sys/devices/system/clocksource/clocksource0/current_clocksource"
	pathDeviceTree  = "proc/device-tree"
)

// atSysinfoEhdr is the auxiliary vector's AT_SYSINFO_EHDR, the vDSO's address
// (include/uapi/linux/auxvec.h).
const atSysinfoEhdr = 33

// archTimerClocksource is the ARM Generic Timer's clocksource
// (drivers/clocksource/arm_arch_timer.c), the only one on a Pi the vDSO reads.
const archTimerClocksource = "arch_sys_counter"

// notFWConfigured is the device-tree property that makes a 32-bit ARM kernel
// drop clock_gettime from its vDSO.
const notFWConfigured = "arm,cpu-registers-not-fw-configured"

// Probe is the machine as Detect looks at it.
type Probe struct {
	Root    string // where /proc and /sys are; "" means "/"
	GOARCH  string // the process's architecture (runtime.GOARCH)
	Machine string // the kernel's architecture (uname -m): armv6l, armv7l, aarch64...
}

// Verdict is whether reading the runtime's clock makes a system call here.
type Verdict struct {
	Syscall bool
	// Known: the files decided. Otherwise Syscall is false and Decide asks the
	// timing.
	Known  bool
	Reason string
	// Disagrees: the timing (Decide) contradicts what the files said.
	Disagrees bool
}

// Detect reads the kernel's files under p.Root for whether the runtime's clock
// (Now) makes a system call; see the checks above.
func Detect(p Probe) Verdict {
	root := p.Root
	if root == "" {
		root = "/"
	}
	word := 0
	switch p.GOARCH {
	case "arm":
		word = 4
	case "arm64":
		word = 8
	default:
		return Verdict{Reason: "GOARCH " + p.GOARCH + ": the files checked are those of ARM kernels"}
	}
	var open []string // checks the files could not make

	switch vdso, err := hasVDSO(filepath.Join(root, pathAuxv), word); {
	case err != nil:
		open = append(open, "no auxiliary vector ("+err.Error()+")")
	case !vdso:
		return Verdict{Syscall: true, Known: true, Reason: "the kernel gave this process no vDSO (no AT_SYSINFO_EHDR " +
			"in /proc/self/auxv): an ARMv6 kernel has none, nor has a 64-bit kernel without the 32-bit compat vDSO for a 32-bit process"}
	}

	if p.GOARCH == "arm" && strings.HasPrefix(p.Machine, "armv") {
		switch node, cfg, err := archTimerNode(filepath.Join(root, pathDeviceTree)); {
		case err != nil:
			open = append(open, "no device tree ("+err.Error()+")")
		case node == "":
			return Verdict{Syscall: true, Known: true, Reason: "the device tree has no arm,armv7-timer or arm,armv8-timer " +
				"node, and a 32-bit ARM kernel then removes clock_gettime from its vDSO (arch/arm/kernel/vdso.c)"}
		case cfg:
			return Verdict{Syscall: true, Known: true, Reason: "the device tree marks the ARM timer (/proc/device-tree/" + node +
				") " + notFWConfigured + ", and a 32-bit ARM kernel then removes clock_gettime from its vDSO (arch/arm/kernel/vdso.c); " +
				"a device tree from January 2025 or later has not the mark"}
		}
	}

	cs, err := os.ReadFile(filepath.Join(root, pathClocksource))
	switch name := strings.TrimSpace(string(cs)); {
	case err != nil:
		open = append(open, "no current clocksource ("+err.Error()+")")
	case name != archTimerClocksource:
		return Verdict{Syscall: true, Known: true, Reason: "the kernel's clocksource is " + name + ", which the vDSO cannot read: " +
			"every clock_gettime is a system call (only " + archTimerClocksource + ", the ARM Generic Timer, can be read from user space)"}
	}
	if len(open) > 0 {
		return Verdict{Reason: "cannot tell from the files: " + strings.Join(open, "; ")}
	}
	return Verdict{Known: true, Reason: "the vDSO reads CLOCK_MONOTONIC from the ARM Generic Timer (" + archTimerClocksource + ")"}
}

// hasVDSO reports whether the auxiliary vector (pairs of words of the given size,
// little-endian) has a non-zero AT_SYSINFO_EHDR.
func hasVDSO(path string, word int) (bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, trimPathErr(err)
	}
	if len(b) == 0 || len(b)%(2*word) != 0 {
		return false, errors.New(path + " is not an auxiliary vector")
	}
	val := func(i int) uint64 {
		if word == 4 {
			return uint64(binary.LittleEndian.Uint32(b[i:]))
		}
		return binary.LittleEndian.Uint64(b[i:])
	}
	for i := 0; i+2*word <= len(b); i += 2 * word {
		switch val(i) {
		case 0: // AT_NULL ends the vector
			return false, nil
		case atSysinfoEhdr:
			return val(i+word) != 0, nil
		}
	}
	return false, nil
}

// archTimerNode finds the ARM timer among the device tree's top-level timer
// nodes (timer, timer@...; where every Raspberry Pi device tree has it): its
// name, "" if there is none, and whether it has notFWConfigured.
func archTimerNode(dt string) (name string, notConfigured bool, err error) {
	ents, err := os.ReadDir(dt)
	if err != nil {
		return "", false, trimPathErr(err)
	}
	for _, e := range ents {
		n := e.Name()
		if !e.IsDir() || (n != "timer" && !strings.HasPrefix(n, "timer@")) {
			continue
		}
		compat, err := os.ReadFile(filepath.Join(dt, n, "compatible"))
		if err != nil {
			continue
		}
		list := strings.Split(string(bytes.TrimRight(compat, "\x00")), "\x00")
		if !slices.Contains(list, "arm,armv7-timer") && !slices.Contains(list, "arm,armv8-timer") {
			continue
		}
		_, err = os.Stat(filepath.Join(dt, n, notFWConfigured))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", false, trimPathErr(err)
		}
		return n, err == nil, nil
	}
	return "", false, nil
}

// trimPathErr is err without the *PathError's operation (the path stays).
func trimPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return errors.New(pe.Path + ": " + pe.Err.Error())
	}
	return err
}

// KernelMachine is the kernel's architecture as uname -m gives it ("" if uname
// fails).
func KernelMachine() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Machine[:])
}
