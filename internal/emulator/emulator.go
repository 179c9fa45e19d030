// Package emulator tells whether this program runs under a user-mode emulator
// (qemu-user), where timings and some /proc files are the emulator's, for tests
// that must skip there.
package emulator

import (
	"debug/elf"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// elfMachine is the ELF e_machine of GOARCH's executables (false: not listed).
func elfMachine(goarch string) (elf.Machine, bool) {
	switch goarch {
	case "386":
		return elf.EM_386, true
	case "amd64":
		return elf.EM_X86_64, true
	case "arm":
		return elf.EM_ARM, true
	case "arm64":
		return elf.EM_AARCH64, true
	case "riscv64":
		return elf.EM_RISCV, true
	case "ppc64", "ppc64le":
		return elf.EM_PPC64, true
	case "s390x":
		return elf.EM_S390, true
	case "loong64":
		return elf.EM_LOONGARCH, true
	}
	return 0, false
}

// Name describes the program the kernel runs for this thread when that is
// not a GOARCH executable (qemu-user: the kernel runs qemu-arm-static, which runs
// the test binary), or returns "". A user-mode emulator answers /proc/self/exe
// with the guest's binary (qemu's linux-user/syscall.c is_proc_myself), but not
// /proc/self/task/TID/exe, which the kernel resolves to the emulator itself.
func Name() string {
	path := fmt.Sprintf("/proc/self/task/%d/exe", unix.Gettid())
	want, known := elfMachine(runtime.GOARCH)
	f, err := elf.Open(path)
	if err != nil || !known {
		return ""
	}
	defer f.Close()
	if f.Machine == want {
		return ""
	}
	return fmt.Sprintf("%s is an %s executable", path, f.Machine)
}
