package daemon

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"cand/internal/caps"
)

func TestRuntimeCaps(t *testing.T) {
	vcan := lifecycleConfig(t).build()
	none := newRigConfig(t).noInterface().socketcand().build()
	names := func(kept []keptCap) string {
		var s caps.Set
		for _, k := range kept {
			s |= caps.Of(k.c)
		}
		return s.String()
	}
	for _, tc := range []struct {
		name string
		kept []keptCap
		want string
	}{
		{"vcan", runtimeCaps(vcan, false, true), "CAP_NET_ADMIN"},
		{"vcan, memory locked, RLIMIT_MEMLOCK finite", runtimeCaps(vcan, true, true), "CAP_NET_ADMIN,CAP_IPC_LOCK"},
		{"vcan, memory locked, RLIMIT_MEMLOCK infinite", runtimeCaps(vcan, true, false), "CAP_NET_ADMIN"},
		{"no interface", runtimeCaps(none, false, true), "none"},
	} {
		if got := names(tc.kept); got != tc.want {
			t.Errorf("%s: keeps %s, want %s", tc.name, got, tc.want)
		}
	}
}

// privilegesEnv makes the test binary run TestDropPrivilegesHelper: the daemon
// whose capabilities are dropped runs in a subprocess, not in the test's.
const privilegesEnv = "CAND_DAEMON_DROP_PRIVILEGES"

// TestDropPrivilegesHelper runs cand with DropPrivileges, bridges a frame, and
// prints each thread's sets as /proc/self/task/*/status has them.
func TestDropPrivilegesHelper(t *testing.T) {
	if os.Getenv(privilegesEnv) == "" {
		t.Skip("the subprocess of TestDaemonDropsPrivileges")
	}
	nd := newFakeNetdevs(t)
	r := startOnNetdevs(t, lifecycleConfig(t).build(), nd, func(o *Options) { o.DropPrivileges = true })
	r.roundTrip(0x100)
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
		if err != nil {
			t.Fatal(err)
		}
		var sets []string
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "Cap") {
				sets = append(sets, strings.Join(strings.Fields(line), ""))
			}
		}
		fmt.Printf("task %s %s\n", task.Name(), strings.Join(sets, " "))
	}
	r.roundTrip(0x102) // still bridging
	r.stop()
	if s := nd.state("vcan0"); s != "down" {
		t.Fatalf("vcan0 %s after exit, want down", s)
	}
}

// Once set up, cand keeps CAP_NET_ADMIN alone (it has an interface to set down
// at exit; memory is not locked in the test's configuration) on every thread of
// the process, effective, permitted and bounding, and nothing inheritable or
// ambient; frames still flow, and the interface is set down at exit.
func TestDaemonDropsPrivileges(t *testing.T) {
	if os.Getenv(privilegesEnv) != "" {
		t.Skip("in the subprocess")
	}
	if err := caps.Supported(); err != nil {
		t.Skipf("%v (make test-unit does)", err)
	}
	st, err := caps.Current()
	if need := caps.Of(caps.SETPCAP, caps.NET_ADMIN); err != nil || st.Effective&need != need {
		t.Skipf("needs %s: run as root (%v)", need, err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDropPrivilegesHelper$", "-test.v")
	cmd.Env = append(os.Environ(), privilegesEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("subprocess: %v\n%s", err, out)
	}
	want := fmt.Sprintf("CapInh:%016x CapPrm:%016x CapEff:%016x CapBnd:%016x CapAmb:%016x", 0, 1<<caps.NET_ADMIN, 1<<caps.NET_ADMIN, 1<<caps.NET_ADMIN, 0)
	var tasks int
	for _, line := range strings.Split(string(out), "\n") {
		tid, sets, ok := strings.Cut(strings.TrimPrefix(line, "task "), " ")
		if !ok || !strings.HasPrefix(line, "task ") {
			continue
		}
		tasks++
		if sets != want {
			t.Errorf("thread %s: %s\n  want %s", tid, sets, want)
		}
	}
	if tasks < 2 || !strings.Contains(string(out), "--- PASS: TestDropPrivilegesHelper") {
		t.Fatalf("%d threads reported:\n%s", tasks, out)
	}
}
