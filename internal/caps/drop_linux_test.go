package caps

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// helperEnv makes the test binary run TestKeepHelper as the process whose
// capabilities are dropped: the test process itself must keep its own.
const helperEnv = "CAND_CAPS_KEEP"

// taskCaps reads every thread's sets from /proc/self/task/*/status.
func taskCaps() (map[string]State, error) {
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil {
		return nil, err
	}
	out := map[string]State{}
	for _, path := range tasks {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		var st State
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			field := map[string]*Set{"CapInh": &st.Inheritable, "CapPrm": &st.Permitted, "CapEff": &st.Effective, "CapBnd": &st.Bounding, "CapAmb": &st.Ambient}[k]
			if field != nil && err == nil {
				*field = Set(n)
			}
		}
		f.Close()
		out[filepath.Base(filepath.Dir(path))] = st
	}
	return out, nil
}

// TestKeepHelper is the subprocess: it holds several threads, keeps the
// capabilities in $CAND_CAPS_KEEP, starts one more thread, and prints each
// thread's sets.
func TestKeepHelper(t *testing.T) {
	v := os.Getenv(helperEnv)
	if v == "" {
		t.Skip("the subprocess of TestKeepOnEveryThread")
	}
	keep, _ := strconv.ParseUint(v, 16, 64)
	hold := make(chan struct{})
	defer close(hold)
	locked := func() {
		started := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(started)
			<-hold
		}()
		<-started
	}
	for range 4 {
		locked()
	}
	r, err := Keep(Set(keep))
	if err != nil {
		fmt.Printf("error %v\n", err)
		return
	}
	locked() // made after the drop: inherits the reduced sets
	fmt.Printf("report kept=%x dropped=%x bounding=%x before_amb=%x bounding_kept=%v\n", uint64(r.Kept), uint64(r.Dropped), uint64(r.Bounding), uint64(r.Before.Ambient), r.BoundingErr != nil)
	tasks, err := taskCaps()
	if err != nil {
		fmt.Printf("error %v\n", err)
		return
	}
	for tid, st := range tasks {
		fmt.Printf("task %s inh=%x prm=%x eff=%x bnd=%x amb=%x\n", tid, uint64(st.Inheritable), uint64(st.Permitted), uint64(st.Effective), uint64(st.Bounding), uint64(st.Ambient))
	}
}

// runHelper runs TestKeepHelper keeping keep, with attr's credentials and
// ambient capabilities, and returns its report line and each thread's sets.
func runHelper(t *testing.T, keep Set, attr *syscall.SysProcAttr) (report string, tasks map[string]string) {
	t.Helper()
	bin := os.Args[0]
	if attr.Credential != nil {
		bin = copyForAnyone(t, bin) // the build directory is the test user's alone
	}
	cmd := exec.Command(bin, "-test.run=^TestKeepHelper$", "-test.v")
	cmd.Dir = filepath.Dir(bin)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%x", helperEnv, uint64(keep)))
	cmd.SysProcAttr = attr
	out, err := cmd.CombinedOutput()
	if err != nil {
		if attr.Credential != nil {
			t.Skipf("cannot run the test binary as uid %d: %v %s", attr.Credential.Uid, err, out)
		}
		t.Fatalf("subprocess: %v\n%s", err, out)
	}
	tasks = map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "error "):
			if strings.Contains(line, errNotEveryThread.Error()) {
				t.Skip(line)
			}
			t.Fatal(line)
		case strings.HasPrefix(line, "report "):
			report = line
		case strings.HasPrefix(line, "task "):
			f := strings.Fields(line)
			tasks[f[1]] = strings.Join(f[2:], " ")
		}
	}
	if len(tasks) < 6 {
		t.Fatalf("%d threads reported, want at least the 5 the helper holds and the main one:\n%s", len(tasks), out)
	}
	return report, tasks
}

// copyForAnyone copies the executable bin into a directory every user may enter.
func copyForAnyone(t *testing.T, bin string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cand-caps")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	b, err := os.ReadFile(bin)
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	dst := filepath.Join(dir, "caps.test")
	if err == nil {
		err = os.WriteFile(dst, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func needRoot(t *testing.T) State {
	t.Helper()
	if err := Supported(); err != nil {
		t.Skipf("%v (make test-unit does)", err)
	}
	st, err := Current()
	if err != nil {
		t.Fatal(err)
	}
	need := Of(SETPCAP, NET_ADMIN, SYS_NICE)
	if os.Geteuid() != 0 || st.Effective&need != need || st.Bounding&need != need {
		t.Skipf("needs root with %s (effective %s)", need, st.Effective)
	}
	return st
}

// As root with ambient capabilities (what systemd's AmbientCapabilities= gives),
// Keep leaves every thread of the process, also one made afterwards, with
// exactly the kept capabilities effective, permitted and bounding, and none
// inheritable or ambient.
func TestKeepOnEveryThread(t *testing.T) {
	if os.Getenv(helperEnv) != "" {
		t.Skip("in the subprocess")
	}
	st := needRoot(t)
	keep := Of(NET_ADMIN)
	report, tasks := runHelper(t, keep, &syscall.SysProcAttr{AmbientCaps: []uintptr{uintptr(NET_ADMIN), uintptr(SYS_NICE)}})
	want := fmt.Sprintf("report kept=%x dropped=%x bounding=%x before_amb=%x bounding_kept=false",
		uint64(keep), uint64(st.Permitted&^keep), uint64(keep), uint64(Of(NET_ADMIN, SYS_NICE)))
	if report != want {
		t.Errorf("got  %s\nwant %s", report, want)
	}
	for tid, sets := range tasks {
		if want := fmt.Sprintf("inh=0 prm=%x eff=%x bnd=%x amb=0", uint64(keep), uint64(keep), uint64(keep)); sets != want {
			t.Errorf("thread %s: %s\n  want %s", tid, sets, want)
		}
	}
}

// As a user of its own (systemd's User= with AmbientCapabilities=), the process
// has no CAP_SETPCAP: the bounding set stays as the service manager set it, the
// other sets are dropped on every thread all the same.
func TestKeepAsAUser(t *testing.T) {
	if os.Getenv(helperEnv) != "" {
		t.Skip("in the subprocess")
	}
	st := needRoot(t)
	keep := Of(NET_ADMIN)
	amb := Of(NET_ADMIN, SYS_NICE)
	report, tasks := runHelper(t, keep, &syscall.SysProcAttr{
		Credential:  &syscall.Credential{Uid: 65534, Gid: 65534},
		AmbientCaps: []uintptr{uintptr(NET_ADMIN), uintptr(SYS_NICE)},
	})
	want := fmt.Sprintf("report kept=%x dropped=%x bounding=%x before_amb=%x bounding_kept=true", uint64(keep), uint64(amb&^keep), uint64(st.Bounding), uint64(amb))
	if report != want {
		t.Errorf("got  %s\nwant %s", report, want)
	}
	for tid, sets := range tasks {
		if want := fmt.Sprintf("inh=0 prm=%x eff=%x bnd=%x amb=0", uint64(keep), uint64(keep), uint64(st.Bounding)); sets != want {
			t.Errorf("thread %s: %s\n  want %s", tid, sets, want)
		}
	}
}
