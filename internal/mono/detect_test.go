package mono

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeRoot is a machine's /proc and /sys as Detect reads them.
type fakeRoot struct {
	auxv        []uint64 // key, value pairs; nil: no file
	word        int      // 4 (32-bit process) or 8
	clocksource string   // "" : no file
	// timers are the device tree's top-level timer nodes: name → compatible
	// and whether it has arm,cpu-registers-not-fw-configured. nil: no device tree.
	timers map[string]timerNode
}

type timerNode struct {
	compatible    string
	notConfigured bool
}

func (f fakeRoot) write(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	put := func(rel string, b []byte) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if f.auxv != nil {
		var b []byte
		for _, v := range append(f.auxv, 0, 0) {
			if f.word == 4 {
				b = binary.LittleEndian.AppendUint32(b, uint32(v))
			} else {
				b = binary.LittleEndian.AppendUint64(b, v)
			}
		}
		put(pathAuxv, b)
	}
	if f.clocksource != "" {
		put(pathClocksource, []byte(f.clocksource+"\n"))
	}
	if f.timers != nil {
		put(pathDeviceTree+"/compatible", []byte("raspberrypi,4-model-b\x00brcm,bcm2711\x00"))
		put(pathDeviceTree+"/soc/timer@7e003000/compatible", []byte("brcm,bcm2835-system-timer\x00"))
		for name, n := range f.timers {
			put(pathDeviceTree+"/"+name+"/compatible", []byte(n.compatible+"\x00"))
			if n.notConfigured {
				put(pathDeviceTree+"/"+name+"/"+notFWConfigured, nil)
			}
		}
	}
	return root
}

// Auxiliary vectors: AT_PAGESZ 6, AT_HWCAP 16, AT_SYSINFO_EHDR 33.
var (
	auxvVDSO   = []uint64{16, 0x1fb8d7, 6, 4096, atSysinfoEhdr, 0xb6fd1000}
	auxvNoVDSO = []uint64{16, 0x1c7, 6, 4096}
	armv7Timer = map[string]timerNode{"timer": {compatible: "arm,armv7-timer"}}
	oldPi4DT   = map[string]timerNode{"timer": {compatible: "arm,armv8-timer", notConfigured: true}}
	newPi4DT   = map[string]timerNode{"timer": {compatible: "arm,armv8-timer"}}
)

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name            string
		goarch, machine string
		root            fakeRoot
		syscall, known  bool
		reason          string // a part of the reason
	}{
		{"Pi 1 / Zero: an ARMv6 kernel has no vDSO", "arm", "armv6l",
			fakeRoot{auxv: auxvNoVDSO, word: 4, clocksource: "timer", timers: map[string]timerNode{}},
			true, true, "no vDSO (no AT_SYSINFO_EHDR"},
		{"Pi 4, 32-bit kernel, device tree before 2025", "arm", "armv7l",
			fakeRoot{auxv: auxvVDSO, word: 4, clocksource: "arch_sys_counter", timers: oldPi4DT},
			true, true, "marks the ARM timer (/proc/device-tree/timer) arm,cpu-registers-not-fw-configured"},
		{"Pi 4, 32-bit kernel, device tree of 2025", "arm", "armv7l",
			fakeRoot{auxv: auxvVDSO, word: 4, clocksource: "arch_sys_counter", timers: newPi4DT},
			false, true, "from the ARM Generic Timer (arch_sys_counter)"},
		{"Pi 3, 32-bit kernel", "arm", "armv7l",
			fakeRoot{auxv: auxvVDSO, word: 4, clocksource: "arch_sys_counter", timers: armv7Timer},
			false, true, "arch_sys_counter"},
		{"32-bit kernel, no ARM timer node", "arm", "armv7l",
			fakeRoot{auxv: auxvVDSO, word: 4, clocksource: "arch_sys_counter", timers: map[string]timerNode{}},
			true, true, "no arm,armv7-timer or arm,armv8-timer node"},
		{"Pi 4, 64-bit kernel and process: the device tree mark does not matter", "arm64", "aarch64",
			fakeRoot{auxv: auxvVDSO, word: 8, clocksource: "arch_sys_counter", timers: oldPi4DT},
			false, true, "arch_sys_counter"},
		{"32-bit process on a 64-bit kernel with the compat vDSO", "arm", "aarch64",
			fakeRoot{auxv: auxvVDSO, word: 4, clocksource: "arch_sys_counter", timers: oldPi4DT},
			false, true, "arch_sys_counter"},
		{"32-bit process on a 64-bit kernel without the compat vDSO", "arm", "aarch64",
			fakeRoot{auxv: auxvNoVDSO, word: 4, clocksource: "arch_sys_counter", timers: newPi4DT},
			true, true, "no vDSO"},
		{"clocksource the vDSO cannot read", "arm64", "aarch64",
			fakeRoot{auxv: auxvVDSO, word: 8, clocksource: "timer", timers: newPi4DT},
			true, true, "the kernel's clocksource is timer, which the vDSO cannot read"},
		{"no /sys", "arm64", "aarch64",
			fakeRoot{auxv: auxvVDSO, word: 8, timers: newPi4DT},
			false, false, "cannot tell from the files: no current clocksource"},
		{"no /proc", "arm", "armv7l",
			fakeRoot{clocksource: "arch_sys_counter"},
			false, false, "no auxiliary vector"},
		{"auxv of the wrong word size", "arm64", "aarch64",
			fakeRoot{auxv: []uint64{6, 4096, atSysinfoEhdr}, word: 4, clocksource: "arch_sys_counter"},
			false, false, "is not an auxiliary vector"},
		{"not ARM", "amd64", "x86_64",
			fakeRoot{auxv: auxvVDSO, word: 8, clocksource: "tsc"},
			false, false, "GOARCH amd64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Detect(Probe{Root: tc.root.write(t), GOARCH: tc.goarch, Machine: tc.machine})
			if v.Syscall != tc.syscall || v.Known != tc.known || !strings.Contains(v.Reason, tc.reason) {
				t.Fatalf("Detect = %+v\nwant syscall %v, known %v, a reason with %q", v, tc.syscall, tc.known, tc.reason)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	vdso := Cost{ClockNs: 40, SyscallNs: 400}
	sys := Cost{ClockNs: 800, SyscallNs: 600}
	for _, tc := range []struct {
		name               string
		v                  Verdict
		c                  Cost
		syscall, disagrees bool
		reason             string
	}{
		{"files say vDSO, timing agrees", Verdict{Known: true, Reason: "r"}, vdso, false, false,
			"r (a clock read takes 40 ns, a null system call 400 ns)"},
		{"files say system call, timing agrees", Verdict{Syscall: true, Known: true, Reason: "r"}, sys, true, false,
			"r (a clock read takes 800 ns, a null system call 600 ns)"},
		{"files say vDSO, timing disagrees", Verdict{Known: true, Reason: "r"}, sys, false, true,
			"r; but the timing says otherwise: a clock read takes 800 ns, a null system call 600 ns"},
		{"files cannot tell: the timing decides", Verdict{Reason: "r"}, sys, true, false,
			"r; a clock read takes 800 ns, a null system call 600 ns: a system call"},
		{"files cannot tell, timing says vDSO", Verdict{Reason: "r"}, vdso, false, false,
			"r; a clock read takes 40 ns, a null system call 400 ns: no system call"},
		{"half a system call counts as one", Verdict{Reason: "r"}, Cost{ClockNs: 200, SyscallNs: 400}, true, false,
			"r; a clock read takes 200 ns, a null system call 400 ns: a system call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(tc.v, tc.c)
			if got.Syscall != tc.syscall || got.Disagrees != tc.disagrees || got.Reason != tc.reason {
				t.Fatalf("Decide = %+v\nwant syscall %v, disagrees %v, reason %q", got, tc.syscall, tc.disagrees, tc.reason)
			}
		})
	}
}

// The measurement gives positive figures (their size is this host's; timing
// claims are benchmarks').
func TestMeasureCost(t *testing.T) {
	c := MeasureCost()
	if c.ClockNs <= 0 || c.SyscallNs <= 0 {
		t.Fatalf("MeasureCost = %+v", c)
	}
	t.Logf("%v", c)
}

func TestKernelMachine(t *testing.T) {
	if KernelMachine() == "" {
		t.Fatal("uname gave no machine")
	}
}

func BenchmarkGetppid(b *testing.B) {
	for b.Loop() {
		unix.Getppid()
	}
}
