// Package systemd_test checks cand.service, cand.sysusers and their fit with
// systemd's own tools: systemd-analyze verify and security, the system-call sets,
// systemd-sysusers.
package systemd_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"cand/hw/cpufreq"
)

const (
	unitFile     = "cand.service"
	sysusersFile = "cand.sysusers"
	// maxExposure is the highest `systemd-analyze security` score the unit may have.
	maxExposure = 2.5
)

// unit is a unit file's settings: "Section.Key" → its values in file order.
type unit map[string][]string

// readUnit parses the file's [Section] and Key=Value lines; anything else fails
// the test.
func readUnit(t *testing.T, path string) unit {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u := unit{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" || strings.ContainsAny(k, " \t") {
				t.Fatalf("%s:%d: %q is not Key=Value inside a section", path, n, line)
			}
			u[section+"."+k] = append(u[section+"."+k], v)
		}
	}
	return u
}

// tool returns the path of a systemd program, or skips the test without it
// (fails it when CI=true: tools/install-deps.sh installs systemd).
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing (CI=true): apt-get install systemd", name)
		}
		t.Skipf("%s is not installed (apt-get install systemd)", name)
	}
	return p
}

// The keys cand depends on are there once, with these values; the settings that
// would break it are absent.
func TestUnitSettings(t *testing.T) {
	u := readUnit(t, unitFile)
	for k, want := range map[string]string{
		"Service.Type": "notify", "Service.Restart": "on-failure", "Service.LimitMEMLOCK": "infinity",
		"Service.ExecStart":             "/usr/bin/cand -config /etc/cand/cand.yaml",
		"Service.CapabilityBoundingSet": "CAP_NET_ADMIN CAP_SYS_RAWIO CAP_SYS_NICE CAP_IPC_LOCK",
		"Service.AmbientCapabilities":   "CAP_NET_ADMIN CAP_SYS_RAWIO CAP_SYS_NICE CAP_IPC_LOCK",
		"Service.User":                  "cand",
		"Service.Group":                 "cand",
		"Service.SupplementaryGroups":   "kmem gpio",
		"Service.RuntimeDirectory":      "cand",
		"Service.UMask":                 "0077",
		"Service.SystemCallFilter":      "@system-service",
		"Service.SystemCallErrorNumber": "EPERM",
		"Service.IPAddressDeny":         "any",
		"Service.IPAddressAllow":        "localhost",
		"Service.ProtectProc":           "invisible",
		"Unit.StartLimitIntervalSec":    "0",
	} {
		if got := u[k]; len(got) != 1 || got[0] != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	for _, k := range []string{"Service.WatchdogSec", "Service.TasksMax", "Service.MemoryMax"} {
		if len(u[k]) != 1 {
			t.Errorf("%s = %q, want one value", k, u[k])
		}
	}
	if pre := u["Service.ExecStartPre"]; !contains(pre, "/usr/bin/cand -check-config -config /etc/cand/cand.yaml") {
		t.Errorf("ExecStartPre = %q: no cand -check-config of the configuration ExecStart uses", pre)
	}
	for _, k := range []string{"Service.PrivateDevices", "Service.RestrictRealtime", "Service.PrivateNetwork",
		"Service.PrivateUsers", "Service.ProcSubset", "Service.CPUSchedulingPolicy"} {
		if u[k] != nil {
			t.Errorf("%s breaks cand", k)
		}
	}
}

// hardware.hold_cpu_clock is done by two steps that run as root outside the
// sandbox ('+'): hold, after the configuration ExecStart= uses is checked, whose
// failure does not stop cand ('-'); and restore, which ExecStopPost= runs however
// cand ended. Both use the state file the daemon looks for (cpufreq.DefaultState),
// so that cand leaves a hold in force to the unit.
func TestUnitHoldsCPUClock(t *testing.T) {
	u := readUnit(t, unitFile)
	hold := "-+/usr/bin/cand cpufreq hold -config /etc/cand/cand.yaml -state " + cpufreq.DefaultState
	restore := "+/usr/bin/cand cpufreq restore -state " + cpufreq.DefaultState
	pre := u["Service.ExecStartPre"]
	check := index(pre, "/usr/bin/cand -check-config -config /etc/cand/cand.yaml")
	if h := index(pre, hold); h < 0 || h < check {
		t.Errorf("ExecStartPre = %q: want %q after the configuration check", pre, hold)
	}
	if post := u["Service.ExecStopPost"]; len(post) != 1 || post[0] != restore {
		t.Errorf("ExecStopPost = %q, want [%q]", post, restore)
	}
	if got := u["Service.ExecStart"]; len(got) != 1 || !strings.HasSuffix(got[0], " -config /etc/cand/cand.yaml") {
		t.Errorf("ExecStart = %q: the hold step reads /etc/cand/cand.yaml", got)
	}
	if rt := u["Service.RuntimeDirectory"]; len(rt) == 1 && strings.HasPrefix(cpufreq.DefaultState, "/run/"+rt[0]+"/") {
		t.Errorf("state file %s is in the RuntimeDirectory= user cand may write", cpufreq.DefaultState)
	}
}

// index is the position of s in list, or -1.
func index(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// systemd-analyze verify passes without a word, the unit installed where the Debian
// package puts it and the host's units beside it. verify needs ExecStart='s and ExecReload='s files to
// be executable, so placeholders stand in for cand and kill (make test-pkg verifies the
// installed package's unit with the real binary).
func TestVerify(t *testing.T) {
	analyze := tool(t, "systemd-analyze")
	root := t.TempDir()
	units := filepath.Join(root, "lib/systemd/system")
	for _, d := range []string{units, filepath.Join(root, "usr/bin"), filepath.Join(root, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The host's units, as files: verify resolves symbolic links inside --root.
	host, err := os.ReadDir("/lib/systemd/system")
	if err != nil || len(host) == 0 {
		t.Skipf("no systemd units in /lib/systemd/system to verify against (%v)", err)
	}
	for _, e := range host {
		f := filepath.Join("/lib/systemd/system", e.Name())
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			copyFile(t, f, filepath.Join(units, e.Name()), 0o644)
		}
	}
	copyFile(t, unitFile, filepath.Join(units, "cand.service"), 0o644)
	for _, exe := range []string{"usr/bin/cand", "bin/kill"} { // ExecStart=, ExecReload=
		if err := os.WriteFile(filepath.Join(root, exe), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(analyze, "verify", "--man=no", "--root="+root, "/lib/systemd/system/cand.service").CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, mode); err != nil {
		t.Fatal(err)
	}
}

var overall = regexp.MustCompile(`Overall exposure level for cand\.service: ([0-9.]+)`)

// systemd-analyze security rates the unit at most maxExposure, both by its own
// --threshold and by the score it prints.
func TestSecurityExposure(t *testing.T) {
	analyze := tool(t, "systemd-analyze")
	threshold := strconv.Itoa(int(maxExposure * 10))
	cmd := exec.Command(analyze, "security", "--offline=yes", "--no-pager", "--threshold="+threshold, unitFile)
	out, err := cmd.CombinedOutput()
	m := overall.FindSubmatch(out)
	if m == nil {
		t.Fatalf("systemd-analyze security: %v, no overall exposure in:\n%s", err, out)
	}
	score, perr := strconv.ParseFloat(string(m[1]), 64)
	if perr != nil || score > maxExposure || err != nil {
		t.Errorf("exposure %s (%v), want at most %.1f; systemd-analyze: %v\n%s", m[1], perr, maxExposure, err, out)
	}
}

// needed are the system calls cand makes on linux/amd64, arm and arm64: those the
// Go runtime's assembly names (GOROOT/src/runtime/sys_linux_*.s; not mincore, which
// it uses only where no auxiliary vector exists, on Android), those cand's packages
// make through golang.org/x/sys/unix (internal/rt: sched_setattr, sched_setaffinity,
// mlockall; hw: mmap of /dev/mem, the GPIO ioctls; socketcan: netlink, CAN sockets)
// with their 32-bit ARM spellings, and those strace -f saw while the daemon's
// end-to-end tests ran.
var needed = strings.Fields(`
	accept4 access arch_prctl bind brk clock_gettime clone close connect epoll_create1
	epoll_ctl epoll_pwait epoll_wait eventfd2 exit exit_group faccessat fchmodat fcntl
	fcntl64 fstat fstat64 fstatat64 futex futex_time64 getdents64 getpid getrandom
	getrusage getsockname getsockopt gettid ioctl kill listen madvise mkdirat mlockall mmap
	mmap2 munlockall munmap nanosleep newfstatat open openat pipe2 ppoll ppoll_time64 prctl
	pread64 prlimit64 read readlinkat recvfrom recvmsg rt_sigaction rt_sigprocmask
	rt_sigreturn sched_getaffinity sched_getattr sched_setaffinity sched_setattr
	sched_yield sendto setitimer setsockopt sigaltstack socket socketpair statfs
	statx tgkill timer_create timer_delete timer_settime timer_settime64 ugetrlimit uname
	unlinkat write`)

// Every system call in needed passes the unit's SystemCallFilter=.
func TestSystemCallFilterAllowsCand(t *testing.T) {
	analyze := tool(t, "systemd-analyze")
	allowed := map[string]bool{}
	for _, f := range readUnit(t, unitFile)["Service.SystemCallFilter"] {
		deny := strings.HasPrefix(f, "~")
		for _, item := range strings.Fields(strings.TrimPrefix(f, "~")) {
			for _, s := range expandSyscalls(t, analyze, item) {
				allowed[s] = !deny
			}
		}
	}
	for _, s := range needed {
		if !allowed[s] {
			t.Errorf("SystemCallFilter= refuses %s", s)
		}
	}
}

// expandSyscalls lists the system calls an item of SystemCallFilter= names: a set
// (@name, expanded recursively with systemd-analyze syscall-filter) or one call.
func expandSyscalls(t *testing.T, analyze, item string) []string {
	if !strings.HasPrefix(item, "@") {
		return []string{item}
	}
	out, err := exec.Command(analyze, "syscall-filter", "--no-pager", item).Output()
	if err != nil {
		t.Fatalf("systemd-analyze syscall-filter %s: %v", item, err)
	}
	var calls []string
	for i, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case i == 0 || line == "" || line[0] == '#':
		case line[0] == '@':
			calls = append(calls, expandSyscalls(t, analyze, line)...)
		default:
			calls = append(calls, line)
		}
	}
	if len(calls) == 0 {
		t.Fatalf("systemd-analyze syscall-filter %s lists nothing", item)
	}
	return calls
}

// systemd-sysusers, run on a plain Debian's users and groups (base-passwd), creates a
// system user cand whose group is cand, and every group the unit names exists then.
func TestSysusersGiveTheUnitsUserAndGroups(t *testing.T) {
	sysusers := tool(t, "systemd-sysusers")
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"passwd", "group"} {
		base := "/usr/share/base-passwd/" + f + ".master"
		if _, err := os.Stat(base); err != nil {
			t.Skipf("no %s to start from (base-passwd): %v", base, err)
		}
		copyFile(t, base, filepath.Join(root, "etc", f), 0o644)
	}
	abs, err := filepath.Abs(sysusersFile)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(sysusers, "--root="+root, abs).CombinedOutput(); err != nil {
		t.Fatalf("systemd-sysusers: %v\n%s", err, out)
	}
	passwd := entries(t, filepath.Join(root, "etc/passwd"))
	groups := entries(t, filepath.Join(root, "etc/group"))
	user := passwd["cand"]
	if len(user) != 7 {
		t.Fatalf("no user cand: %q", user)
	}
	if uid, err := strconv.Atoi(user[2]); err != nil || uid >= 1000 || uid == 0 {
		t.Errorf("user cand has uid %s, want a system uid", user[2])
	}
	if user[5] != "/nonexistent" || user[6] != "/usr/sbin/nologin" {
		t.Errorf("user cand: home %q shell %q, want /nonexistent and /usr/sbin/nologin", user[5], user[6])
	}
	u := readUnit(t, unitFile)
	names := append(append([]string{}, u["Service.Group"]...), strings.Fields(strings.Join(u["Service.SupplementaryGroups"], " "))...)
	for _, g := range names {
		if groups[g] == nil {
			t.Errorf("the unit's group %s does not exist after systemd-sysusers", g)
		}
	}
	if g := groups["cand"]; g == nil || g[2] != user[3] {
		t.Errorf("group cand %q is not user cand's primary group %s", g, user[3])
	}
}

// entries reads a passwd or group file: name → its colon-separated fields.
func entries(t *testing.T, path string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, ":")
		m[f[0]] = f
	}
	return m
}
