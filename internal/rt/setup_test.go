package rt

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// onOwnerThread runs f on a fresh goroutine locked to its OS thread, as the owner
// thread runs, and waits for it. The goroutine never unlocks: when it returns the
// runtime ends the thread, so no SCHED_FIFO or pinned thread outlives the test even if
// f fails half-way. It still restores normal scheduling first, as asked of tests.
// f runs off the test's goroutine, so it reports with t.Error and returns; it must not
// call t.Fatal or t.Skip.
func onOwnerThread(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		var all unix.CPUSet
		if err := unix.SchedGetaffinity(0, &all); err != nil {
			t.Errorf("sched_getaffinity: %v", err)
			return
		}
		defer func() {
			unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_NORMAL}, 0)
			unix.SchedSetaffinity(0, &all)
		}()
		f()
	}()
	<-done
}

// otherThread keeps a second locked thread alive until the test ends and returns its tid.
func otherThread(t *testing.T) int {
	tid := make(chan int)
	release := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		<-release
	}()
	t.Cleanup(func() { close(release) })
	return <-tid
}

func firstCPU(t *testing.T) int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatalf("sched_getaffinity: %v", err)
	}
	for c := 0; c < cpuSetSize; c++ {
		if set.IsSet(c) {
			return c
		}
	}
	t.Fatal("no CPU in this thread's affinity mask")
	return -1
}

// Setup changes the calling thread only: as root it sets SCHED_FIFO 40 and the pin;
// without CAP_SYS_NICE it reports the refusal. Either way another thread of the
// process keeps SCHED_OTHER and its CPU mask.
func TestSetupAppliesToCallingThreadOnly(t *testing.T) {
	other := otherThread(t)
	var otherMask unix.CPUSet
	if err := unix.SchedGetaffinity(other, &otherMask); err != nil {
		t.Fatal(err)
	}
	cpu := firstCPU(t)
	onOwnerThread(t, func() {
		rep, err := Setup(Config{Priority: 40, CPU: cpu})
		if err != nil {
			t.Errorf("Setup: %v", err)
			return
		}
		t.Logf("report:\n%s", rep)
		if rep.Tid != unix.Gettid() || rep.Tid == other {
			t.Errorf("Report.Tid = %d, this thread %d, other %d", rep.Tid, unix.Gettid(), other)
		}
		attr, err := unix.SchedGetAttr(0, 0)
		if err != nil {
			t.Error(err)
			return
		}
		prio := rep.Items[0]
		if errors.Is(prio.Err, unix.EPERM) {
			want := "owner thread: SCHED_FIFO 40 refused (EPERM): needs CAP_SYS_NICE or an RLIMIT_RTPRIO of 40 or more (systemd: AmbientCapabilities=CAP_SYS_NICE or LimitRTPRIO=40), and a cgroup with real-time runtime; running with normal scheduling"
			if prio.Line != want || prio.Applied || attr.Policy != unix.SCHED_NORMAL {
				t.Errorf("refused item %+v, policy %d; want line %q, SCHED_OTHER", prio, attr.Policy, want)
			}
		} else {
			if prio.Err != nil || !prio.Applied || prio.Line != "owner thread: SCHED_FIFO priority 40 set" {
				t.Errorf("priority item %+v", prio)
			}
			if attr.Policy != unix.SCHED_FIFO || attr.Priority != 40 {
				t.Errorf("this thread: policy %d priority %d, want SCHED_FIFO 40", attr.Policy, attr.Priority)
			}
		}
		aff := rep.Items[1]
		if aff.Err != nil || !aff.Applied || aff.Line != fmt.Sprintf("owner thread: pinned to CPU %d", cpu) {
			t.Errorf("affinity item %+v", aff)
		}
		var mine unix.CPUSet
		unix.SchedGetaffinity(0, &mine)
		if mine.Count() != 1 || !mine.IsSet(cpu) {
			t.Errorf("this thread's CPU mask has %d CPUs, want only CPU %d", mine.Count(), cpu)
		}
		if len(rep.Items) != 2 {
			t.Errorf("report has %d items without Mlockall, want 2: %q", len(rep.Items), rep.Lines())
		}

		// The other thread, looked up while this one is real-time and pinned.
		oattr, err := unix.SchedGetAttr(other, 0)
		if err != nil {
			t.Error(err)
			return
		}
		if oattr.Policy != unix.SCHED_NORMAL || oattr.Priority != 0 {
			t.Errorf("other thread %d: policy %d priority %d, want SCHED_OTHER 0", other, oattr.Policy, oattr.Priority)
		}
		var omask unix.CPUSet
		unix.SchedGetaffinity(other, &omask)
		if omask != otherMask {
			t.Errorf("other thread %d: CPU mask changed from %d CPUs to %d", other, otherMask.Count(), omask.Count())
		}
		if p, err := schedPolicyFromProc(other); err != nil || p != "0" {
			t.Errorf("/proc/self/task/%d/sched policy %q (%v), want 0 (SCHED_OTHER)", other, p, err)
		}
	})
}

// schedPolicyFromProc reads the "policy" line of /proc/self/task/<tid>/sched.
func schedPolicyFromProc(tid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/sched", tid))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "policy" {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("no policy line in /proc/self/task/%d/sched", tid)
}

// dropPrivileges makes the calling thread — only it, with the raw system call —
// uid nobody without capabilities. The thread must never be unlocked afterwards.
// It returns a reason to skip if the thread may use SCHED_FIFO 40 all the same.
func dropPrivileges() (skip string, err error) {
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, 65534, 65534, 65534); e != 0 && e != unix.EPERM {
		return "", fmt.Errorf("setresuid: %w", e)
	}
	// Already unprivileged (EPERM above) is fine, as long as RLIMIT_RTPRIO refuses 40.
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_RTPRIO, &lim); err != nil {
		return "", err
	}
	if lim.Cur >= 40 {
		return fmt.Sprintf("RLIMIT_RTPRIO %d lets this unprivileged thread use SCHED_FIFO 40", lim.Cur), nil
	}
	return "", nil
}

// Without privileges, the refusal is reported, not fatal; with Require it is an error
// naming the cause and the fix.
func TestSetupRefused(t *testing.T) {
	var skip string
	defer func() {
		if skip != "" {
			t.Skip(skip)
		}
	}()
	onOwnerThread(t, func() {
		var err error
		if skip, err = dropPrivileges(); err != nil || skip != "" {
			if err != nil {
				t.Error(err)
			}
			return
		}
		rep, err := Setup(Config{Priority: 40, CPU: -1})
		if err != nil {
			t.Errorf("Setup without Require: %v", err)
			return
		}
		want := []string{
			"owner thread: SCHED_FIFO 40 refused (EPERM): needs CAP_SYS_NICE or an RLIMIT_RTPRIO of 40 or more (systemd: AmbientCapabilities=CAP_SYS_NICE or LimitRTPRIO=40), and a cgroup with real-time runtime; running with normal scheduling",
			"owner thread: not pinned to a CPU (realtime.cpu -1)",
		}
		if got := rep.Lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("report:\n%s\nwant:\n%s", rep, strings.Join(want, "\n"))
		}
		if r := rep.Refused(); len(r) != 1 || r[0].What != "priority" || !errors.Is(r[0].Err, unix.EPERM) {
			t.Errorf("Refused() = %+v", r)
		}
		_, err = Setup(Config{Priority: 40, CPU: -1, Require: true})
		wantErr := "rt: realtime.required is true, but owner thread: SCHED_FIFO 40 refused (EPERM): needs CAP_SYS_NICE or an RLIMIT_RTPRIO of 40 or more (systemd: AmbientCapabilities=CAP_SYS_NICE or LimitRTPRIO=40), and a cgroup with real-time runtime (or set realtime.required: false to start without)"
		if err == nil || err.Error() != wantErr {
			t.Errorf("Setup with Require: %v\nwant %s", err, wantErr)
		}
		if attr, _ := unix.SchedGetAttr(0, 0); attr == nil || attr.Policy != unix.SCHED_NORMAL {
			t.Errorf("policy after refusal: %+v, want SCHED_OTHER", attr)
		}
	})
}

func TestSetupPriorityWarningAndNormal(t *testing.T) {
	onOwnerThread(t, func() {
		rep, err := Setup(Config{Priority: 60, CPU: -1})
		if err != nil {
			t.Error(err)
			return
		}
		got := rep.Items[0]
		if errors.Is(got.Err, unix.EPERM) {
			t.Log("no CAP_SYS_NICE: SCHED_FIFO refused (TestSetupRefused checks that message)")
			return
		}
		want := "owner thread: SCHED_FIFO priority 60 set (warning: at or above the kernel's IRQ threads (50), which deliver the GPIO edges: a busy owner thread delays its own interrupts; 40 is advised)"
		if got.Line != want {
			t.Errorf("line %q\nwant %q", got.Line, want)
		}
	})
	onOwnerThread(t, func() {
		rep, err := Setup(Config{Priority: 0, CPU: -1})
		if err != nil {
			t.Error(err)
			return
		}
		want := "owner thread: normal scheduling (realtime.priority 0)\nowner thread: not pinned to a CPU (realtime.cpu -1)"
		if rep.String() != want || len(rep.Refused()) != 0 {
			t.Errorf("report %q, want %q", rep.String(), want)
		}
		if attr, _ := unix.SchedGetAttr(0, 0); attr == nil || attr.Policy != unix.SCHED_NORMAL {
			t.Errorf("policy %+v, want SCHED_OTHER", attr)
		}
	})
}

func TestSetupMlockall(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("locks the test process's memory (skipped with -short and -race)")
	}
	onOwnerThread(t, func() {
		rep, err := Setup(Config{CPU: -1, Mlockall: true})
		if err != nil {
			t.Error(err)
			return
		}
		defer unix.Munlockall()
		it := rep.Items[2]
		if it.Err != nil {
			if it.Line != mlockallRefused(it.Err).Line {
				t.Errorf("refused line %q", it.Line)
			}
			return
		}
		if it.What != "mlockall" || !it.Applied || it.Line != "process: memory locked (mlockall MCL_CURRENT|MCL_FUTURE)" {
			t.Errorf("item %+v", it)
		}
	})
}

func TestSetupConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Priority: 100, CPU: -1}, "rt: realtime.priority 100 out of range: use 1..99 for SCHED_FIFO or 0 for normal scheduling"},
		{Config{Priority: -1, CPU: -1}, "rt: realtime.priority -1 out of range: use 1..99 for SCHED_FIFO or 0 for normal scheduling"},
		{Config{CPU: -2}, "rt: realtime.cpu -2 out of range: use a CPU number from 0 or -1 for no pinning"},
		{Config{CPU: 1024}, "rt: realtime.cpu 1024 out of range: use a CPU number from 0 or -1 for no pinning"},
	} {
		if _, err := Setup(c.cfg); err == nil || err.Error() != c.want {
			t.Errorf("Setup(%+v) = %v\nwant %s", c.cfg, err, c.want)
		}
	}
}

func TestRefusalMessages(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{priorityRefused("owner thread", 40, unix.EINVAL).Line, "owner thread: SCHED_FIFO 40 refused (EINVAL): the kernel does not accept this policy or priority; running with normal scheduling"},
		{affinityRefused("owner thread", "realtime.cpu", 7, unix.EINVAL).Line, "owner thread: pinning to CPU 7 refused (EINVAL): CPU 7 is offline, absent or outside this process's cpuset; choose another realtime.cpu; running unpinned"},
		{affinityRefused("delivery thread", "realtime.delivery_cpu", 9, unix.EINVAL).Line, "delivery thread: pinning to CPU 9 refused (EINVAL): CPU 9 is offline, absent or outside this process's cpuset; choose another realtime.delivery_cpu; running unpinned"},
		{affinityRefused("owner thread", "realtime.cpu", 1, unix.EPERM).Line, "owner thread: pinning to CPU 1 refused (EPERM): needs CAP_SYS_NICE; running unpinned"},
		{mlockallRefused(unix.ENOMEM).Line, "process: mlockall refused (ENOMEM): RLIMIT_MEMLOCK is too small: set LimitMEMLOCK=infinity or give CAP_IPC_LOCK; page faults may add latency"},
		{mlockallRefused(unix.EPERM).Line, "process: mlockall refused (EPERM): needs CAP_IPC_LOCK or an RLIMIT_MEMLOCK above the process's size (systemd: LimitMEMLOCK=infinity); page faults may add latency"},
		{mlockallRefused(errors.New("odd")).Line, "process: mlockall refused (odd); page faults may add latency"},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}

// An unavailable CPU is refused with its errno, and the thread stays unpinned.
func TestSetupAffinityRefused(t *testing.T) {
	onOwnerThread(t, func() {
		rep, err := Setup(Config{CPU: cpuSetSize - 1})
		if err != nil {
			t.Error(err)
			return
		}
		it := rep.Items[1]
		want := fmt.Sprintf("owner thread: pinning to CPU %d refused (EINVAL): CPU %d is offline, absent or outside this process's cpuset; choose another realtime.cpu; running unpinned", cpuSetSize-1, cpuSetSize-1)
		if it.Line != want || it.Applied || !errors.Is(it.Err, unix.EINVAL) {
			t.Errorf("item %+v\nwant line %q", it, want)
		}
		// Required, the refusal is the error: what was refused and what allows it.
		_, err = Setup(Config{CPU: cpuSetSize - 1, Require: true})
		wantErr := fmt.Sprintf("rt: realtime.required is true, but owner thread: pinning to CPU %d refused (EINVAL): CPU %d is offline, absent or outside this process's cpuset; choose another realtime.cpu (or set realtime.required: false to start without)", cpuSetSize-1, cpuSetSize-1)
		if err == nil || err.Error() != wantErr {
			t.Errorf("Setup with Require: %v\nwant %s", err, wantErr)
		}
	})
}
