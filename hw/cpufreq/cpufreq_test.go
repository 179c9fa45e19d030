package cpufreq

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// fakePolicy is a policy directory of the fake tree.
type fakePolicy struct {
	name, cpus string
	min, max   string
}

// fakeTree makes a cpufreq directory in a temporary directory with the policies
// given, and beside them what a real one also lists (a governor's tunables); it
// returns the directory and a state file path in another one.
func fakeTree(t *testing.T, ps ...fakePolicy) (Sysfs, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cpufreq")
	for _, p := range ps {
		d := filepath.Join(dir, p.name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for file, v := range map[string]string{minFile: p.min, maxFile: p.max, cpusFile: p.cpus,
			"cpuinfo_max_freq": p.max, "scaling_governor": "ondemand"} {
			if err := os.WriteFile(filepath.Join(d, file), []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "ondemand"), 0o755); err != nil {
		t.Fatal(err)
	}
	return New(dir), filepath.Join(t.TempDir(), "cand-cpufreq.state")
}

// pi4Like is a board with two policies of different ranges, listed out of
// numeric order by name (policy10 sorts before policy4 as a string).
func pi4Like(t *testing.T) (Sysfs, string) {
	return fakeTree(t,
		fakePolicy{"policy0", "0 1 2 3", "600000", "1500000"},
		fakePolicy{"policy10", "10 11", "700000", "1000000"},
		fakePolicy{"policy4", "4 5", "800000", "1200000"})
}

// mins reads each policy's scaling_min_freq, in the order given.
func mins(t *testing.T, s Sysfs, names ...string) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		b, err := os.ReadFile(s.path(n, minFile))
		if err != nil {
			t.Fatal(err)
		}
		line, _, _ := strings.Cut(string(b), "\n") // a shorter value leaves the longer one's tail
		out = append(out, line)
	}
	return out
}

func wantMins(t *testing.T, s Sysfs, want ...string) {
	t.Helper()
	if got := mins(t, s, "policy0", "policy4", "policy10"); !reflect.DeepEqual(got, want) {
		t.Errorf("scaling_min_freq of policy0, policy4, policy10 = %q, want %q", got, want)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const wantState = stateHeader + "policy0 600000 1500000\npolicy4 800000 1200000\npolicy10 700000 1000000\n"

// Policies are listed by number with their limits and CPUs; other entries of the
// directory are not policies.
func TestPolicies(t *testing.T) {
	s, _ := pi4Like(t)
	ps, err := s.Policies()
	if err != nil {
		t.Fatal(err)
	}
	want := []Policy{{"policy0", "0 1 2 3", 600000, 1500000}, {"policy4", "4 5", 800000, 1200000}, {"policy10", "10 11", 700000, 1000000}}
	if !reflect.DeepEqual(ps, want) {
		t.Errorf("policies %+v, want %+v", ps, want)
	}
}

// A hold records the values found, raises every minimum to its policy's maximum,
// and the holder's Restore puts the minimums back and removes the state file.
func TestHoldAndRestore(t *testing.T) {
	s, state := pi4Like(t)
	h, err := s.Hold(state)
	if err != nil {
		t.Fatal(err)
	}
	if h.Kept || len(h.Found) != 3 || !reflect.DeepEqual(h.Saved, h.Found) {
		t.Errorf("held: kept %v, found %+v, saved %+v; want a fresh hold of 3 policies", h.Kept, h.Found, h.Saved)
	}
	wantMins(t, s, "1500000", "1200000", "1000000")
	if got := readFile(t, state); got != wantState {
		t.Errorf("state file:\n%s\nwant:\n%s", got, wantState)
	}
	if fi, err := os.Stat(state); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v (%v), want 0600", fi.Mode(), err)
	}
	if err := h.Restore(); err != nil {
		t.Fatal(err)
	}
	wantMins(t, s, "600000", "800000", "700000")
	if _, err := os.Stat(state); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("state file after the restore: %v, want it removed", err)
	}
}

// The holder dies (SIGKILL, OOM): its hold stays in force and the state file
// behind it. Another process's Restore from that file puts back the values from
// before the hold, and a hold made meanwhile (the restarted unit's) keeps the
// file's originals rather than recording the held values as if they were.
func TestRestoreAfterCrash(t *testing.T) {
	s, state := pi4Like(t)
	h, err := s.Hold(state)
	if err != nil {
		t.Fatal(err)
	}
	h.Close() // the process dies: files closed, nothing restored
	wantMins(t, s, "1500000", "1200000", "1000000")

	h2, err := s.Hold(state)
	if err != nil {
		t.Fatal(err)
	}
	h2.Close()
	if !h2.Kept || h2.Saved[0].MinKHz != 600000 || h2.Found[0].MinKHz != 1500000 {
		t.Errorf("second hold: kept %v, saved %+v, found %+v; want the first hold's originals kept", h2.Kept, h2.Saved, h2.Found)
	}
	if got := readFile(t, state); got != wantState {
		t.Errorf("state file after a second hold:\n%s\nwant it unchanged:\n%s", got, wantState)
	}

	r, err := s.Restore(state)
	if err != nil {
		t.Fatal(err)
	}
	if r.NoState || len(r.Policies) != 3 {
		t.Errorf("restore %+v, want 3 policies restored", r)
	}
	wantMins(t, s, "600000", "800000", "700000")
	if _, err := os.Stat(state); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("state file after the restore: %v, want it removed", err)
	}
}

// A restore without a state file writes nothing and says so.
func TestRestoreWithoutState(t *testing.T) {
	s, state := pi4Like(t)
	if err := os.WriteFile(s.path("policy0", minFile), []byte("1500000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := s.Restore(state)
	if err != nil || !r.NoState || r.Policies != nil {
		t.Errorf("restore without a state file: %+v, %v; want NoState and nothing written", r, err)
	}
	wantMins(t, s, "1500000", "800000", "700000")
}

// refuse is an open that fails as the kernel does for errno.
func refuse(errno syscall.Errno) func(string, int, fs.FileMode) (*os.File, error) {
	return func(name string, flag int, perm fs.FileMode) (*os.File, error) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errno}
	}
}

// A refused write (not root: permission denied; ProtectKernelTunables=: a
// read-only /sys) changes nothing, leaves no state file, and the error names the
// file, the cause and the fixes.
func TestHoldRefused(t *testing.T) {
	for _, c := range []struct {
		errno syscall.Errno
		want  []string
	}{
		{syscall.EACCES, []string{"open ", "policy0/scaling_min_freq: permission denied", "root's to change",
			"ExecStartPre=+ step (cand cpufreq hold)", "sudo cand cpufreq hold", "hardware.hold_cpu_clock: false"}},
		{syscall.EROFS, []string{"policy0/scaling_min_freq: read-only file system", "ProtectKernelTunables=",
			"ExecStartPre=+ step (cand cpufreq hold)", "as root", "hardware.hold_cpu_clock: false"}},
	} {
		s, state := pi4Like(t)
		s.open = refuse(c.errno)
		_, err := s.Hold(state)
		if err == nil {
			t.Fatalf("%v: hold succeeded", c.errno)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not say %q", c.errno, err, w)
			}
		}
		if !errors.Is(err, c.errno) {
			t.Errorf("%v: error %q does not wrap it", c.errno, err)
		}
		if _, serr := os.Stat(state); !errors.Is(serr, fs.ErrNotExist) {
			t.Errorf("%v: a state file was left: %v", c.errno, serr)
		}
		wantMins(t, s, "600000", "800000", "700000")
	}
}

// The same with real read-only files, as a user other than root meets them.
func TestHoldReadOnlyFiles(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes read-only files (CAP_DAC_OVERRIDE): TestHoldRefused covers the refusal")
	}
	s, state := pi4Like(t)
	if err := os.Chmod(s.path("policy4", minFile), 0o444); err != nil {
		t.Fatal(err)
	}
	_, err := s.Hold(state)
	if err == nil || !strings.Contains(err.Error(), "policy4/scaling_min_freq: permission denied: the CPU clock's limits are root's to change") {
		t.Errorf("hold of a read-only policy: %v, want permission denied naming the file and the cause", err)
	}
	wantMins(t, s, "600000", "800000", "700000")
}

// A restore that cannot write keeps the state file for another try.
func TestRestoreRefusedKeepsState(t *testing.T) {
	s, state := pi4Like(t)
	h, err := s.Hold(state)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	s.open = refuse(syscall.EACCES)
	if _, err := s.Restore(state); err == nil || !strings.Contains(err.Error(), "stay in "+state) {
		t.Errorf("refused restore: %v, want an error saying the state file stays", err)
	}
	if got := readFile(t, state); got != wantState {
		t.Errorf("state file after a refused restore:\n%s\nwant it unchanged", got)
	}
}

// Without cpufreq (no directory, or no policy in it) the error names the
// directory and is ErrNoCpufreq; nothing is written.
func TestNoCpufreq(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "cpufreq")
	_, err := New(missing).Hold(filepath.Join(t.TempDir(), "state"))
	if !errors.Is(err, ErrNoCpufreq) || !strings.Contains(err.Error(), missing+" does not exist") {
		t.Errorf("hold without a cpufreq directory: %v, want ErrNoCpufreq naming %s", err, missing)
	}
	empty := t.TempDir()
	if err := os.Mkdir(filepath.Join(empty, "ondemand"), 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "state")
	_, err = New(empty).Hold(state)
	if !errors.Is(err, ErrNoCpufreq) || !strings.Contains(err.Error(), empty+" lists no policyN directory") {
		t.Errorf("hold with no policy: %v, want ErrNoCpufreq naming %s", err, empty)
	}
	if _, serr := os.Stat(state); !errors.Is(serr, fs.ErrNotExist) {
		t.Errorf("a state file was written: %v", serr)
	}
}

// A state file cand did not write is refused, and nothing is written from it:
// a symbolic link, garbage, a policy name that is not policyN (a path), a
// frequency that is not one.
func TestStateRefused(t *testing.T) {
	s, state := pi4Like(t)
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte("policy0 1 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, state); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Restore(state); err == nil || !strings.Contains(err.Error(), "is a symbolic link: refused") {
		t.Errorf("restore from a symbolic link: %v, want it refused", err)
	}
	if _, err := s.Hold(state); err == nil || !strings.Contains(err.Error(), "is a symbolic link: refused") {
		t.Errorf("hold over a symbolic link: %v, want it refused", err)
	}
	for _, text := range []string{
		"",
		"# only a comment\n",
		"../../../etc/passwd 600000 1200000\n",
		"policy0 600000\n",
		"policy0 fast 1200000\n",
		"policy0 0 1200000\n",
		"policy0 600000 1200000\npolicy0 600000 1200000\n",
	} {
		os.Remove(state)
		if err := os.WriteFile(state, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Restore(state); err == nil || !strings.Contains(err.Error(), "it is not what cand cpufreq hold writes") {
			t.Errorf("restore from %q: %v, want it refused", text, err)
		}
	}
	wantMins(t, s, "600000", "800000", "700000")
}

// The state file is replaced whole: a leftover temporary file (a hold that died
// while writing) or a symbolic link in its place is not written through.
func TestStateWrittenAfresh(t *testing.T) {
	s, state := pi4Like(t)
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, state+".tmp"); err != nil {
		t.Fatal(err)
	}
	h, err := s.Hold(state)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Restore()
	if got := readFile(t, victim); got != "keep\n" {
		t.Errorf("the file behind a symbolic link at the temporary name was written: %q", got)
	}
	if got := readFile(t, state); got != wantState {
		t.Errorf("state file:\n%s\nwant:\n%s", got, wantState)
	}
}

// The holder's Restore writes through the files the hold opened: it works after
// the process lost the right to open them (the daemon drops its privileges once
// set up).
func TestHeldRestoresThroughOpenFiles(t *testing.T) {
	s, state := pi4Like(t)
	h, err := s.Hold(state)
	if err != nil {
		t.Fatal(err)
	}
	h.sys.open = refuse(syscall.EACCES)
	if err := h.Restore(); err != nil {
		t.Fatalf("restore through the open files: %v", err)
	}
	wantMins(t, s, "600000", "800000", "700000")
}
