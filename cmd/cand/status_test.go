package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/daemon"
	"cand/daemon/daemontest"
	"cand/internal/waitfor"
	"cand/socketcan"
)

// runEnv, when set, makes the test binary run cand with these arguments instead
// of the tests: the permission test runs the command as another user this way.
const runEnv = "CAND_TEST_RUN"

func TestMain(m *testing.M) {
	if args := os.Getenv(runEnv); args != "" {
		os.Exit(run(strings.Fields(args), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// statusDaemon runs cand in-process on the virtual Pi with an answering peer,
// serving its status on a socket in a new directory (mode 0755, so other users
// may look for the socket) given to group. It returns the socket's path once cand
// is bridging and a few frames went both ways; cand stops when the test ends.
func statusDaemon(t *testing.T, group string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cand-status")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "status.sock")
	d := daemontest.Start(t, fmt.Sprintf(`hardware: {backend: sim}
realtime: {priority: 0, mlockall: false}
status: {socket: %q, group: %q}
controllers:
  - name: sim0
    bitrate: 500000
    interface: {name: vcan0}
    sim: {peers: [{kind: answer, name: echo}]}
`, sock, group))
	// Three frames out, three answers back.
	host := d.Host[0]
	unix.SetsockoptTimeval(host, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 5})
	var b [socketcan.FrameSize]byte
	for i := range 3 {
		socketcan.Encode(&b, can.Frame{ID: 0x100 + uint32(i), Length: 2, Data: can.Data{byte(i), 0xAA}})
		// Blocking calls: the Go runtime's signals (and qemu-user's) may cut them
		// short with EINTR, which is no answer yet.
		if _, err := retryEINTR(func() (int, error) { return unix.Write(host, b[:]) }); err != nil {
			t.Fatal(err)
		}
		if _, err := retryEINTR(func() (int, error) { return unix.Read(host, b[:]) }); err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
	}
	return sock
}

// cand status prints what cand status -json carries, in the layout of ip -details
// -statistics link show (docs/status.md); the bus-load line changes with each
// interval and is checked for its form only.
func TestStatusCommand(t *testing.T) {
	sock := statusDaemon(t, "")
	// A frame is counted just after it is written to the socket: wait for the
	// counts of the frames the test has seen.
	var st daemon.Status
	var out string
	waitfor.Until(5*time.Second, func() bool {
		code, o, errOut := runCand("status", "-socket", sock, "-json")
		if code != 0 {
			t.Fatalf("status -json: exit %d: %s", code, errOut)
		}
		st, out = daemon.Status{}, o
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("status -json is no status document: %v\n%s", err, out)
		}
		c := st.Controllers[0]
		return c.RX.Frames == 3 && c.TX.Frames == 3
	})
	var raw map[string]any
	json.Unmarshal([]byte(out), &raw)
	if raw["schema_version"] != float64(daemon.StatusSchemaVersion) {
		t.Errorf("schema_version %v, want %d", raw["schema_version"], daemon.StatusSchemaVersion)
	}
	c := st.Controllers[0]
	if c.RX.Frames != 3 || c.TX.Frames != 3 || c.RX.Bytes != 6 || c.TX.Bytes != 6 || c.RX.BitTimes == 0 || c.TX.BitTimes == 0 {
		t.Errorf("rx %+v tx %+v, want 3 frames of 2 bytes each way", c.RX, c.TX)
	}

	code, human, errOut := runCand("status", "-socket", sock)
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, errOut)
	}
	var want bytes.Buffer
	writeStatus(&want, &st)
	load := regexp.MustCompile(`^    bus-load rx \d+\.\d% tx \d+\.\d% total \d+\.\d% \(last \d+\.\ds\)$`)
	got, wantLines := strings.Split(human, "\n"), strings.Split(want.String(), "\n")
	if len(got) != len(wantLines) {
		t.Fatalf("status printed\n%s\nwant\n%s", human, want.String())
	}
	for i := range got {
		if strings.HasPrefix(wantLines[i], "    bus-load ") {
			if !load.MatchString(got[i]) {
				t.Errorf("bus-load line %q", got[i])
			}
			continue
		}
		if got[i] != wantLines[i] {
			t.Errorf("line %d: %q, want %q", i+1, got[i], wantLines[i])
		}
	}
	link := "down"
	if c.LinkUp {
		link = "up"
	}
	for _, line := range []string{
		"1: sim0: interface vcan0 link " + link + " chip ",
		"    can state " + c.State + " (berr-counter tx 0 rx 0) restart-ms 100\n",
		"\n          bitrate 500000 sample-point 0.875\n",
		"\n          tq 125 prop-seg 6 phase-seg1 7 phase-seg2 2 sjw 1 brp 1\n",
		"\n          mcp2515: oscillator 16000000 sclk 10000000\n",
		"\n          re-started bus-off chip-resets\n          0          0       0\n",
		fmt.Sprintf("\n    RX: bytes frames bit-times overflows ring-drops socket-errors\n        6     3      %-9d 0         0          0\n", c.RX.BitTimes),
		fmt.Sprintf("\n    TX: bytes frames bit-times dropped socket-drops invalid\n        6     3      %-9d 0       0            0\n", c.TX.BitTimes),
		"\n    errors: error-frames message-errors spi-errors\n            0            0              0\n",
		"\n    latency                 count         p50         p99\n    int_to_handler    ",
	} {
		if !strings.Contains(human, line) {
			t.Errorf("status lacks %q:\n%s", line, human)
		}
	}
	if t.Failed() {
		t.Logf("cand status:\n%s", human)
	}
}

// With no daemon, cand status says so, names the socket and exits 3.
func TestStatusNoDaemon(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{
		filepath.Join(dir, "missing.sock"),
		staleSocket(t, filepath.Join(dir, "stale.sock")), // left by a daemon that is gone
	} {
		for _, args := range [][]string{{"status", "-socket", path}, {"status", "-json", "-socket", path}} {
			code, out, errOut := runCand(args...)
			want := "cand status: no daemon at " + path + " (is cand running? see systemctl status cand)\n"
			if code != exitNoDaemon || out != "" || errOut != want {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", args, code, out, errOut, exitNoDaemon, want)
			}
		}
	}
}

// staleSocket leaves a unix socket at path that nothing listens on.
func staleSocket(t *testing.T, path string) string {
	t.Helper()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	return path
}

// The socket is mode 0660 and belongs to status.group: a user outside the group
// is refused, and cand status says how to get in (exit 4); the same user as a
// member of the group is served. The command runs as user nobody, from a copy of
// the test binary.
func TestStatusPermission(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: to give the socket to another group and to run cand status as another user")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody to run cand status as: %v", err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	var group *user.Group
	for _, name := range []string{"daemon", "users", "bin", "sys", "adm"} {
		if g, err := user.LookupGroup(name); err == nil && g.Gid != nobody.Gid && g.Gid != "0" {
			group = g
			break
		}
	}
	if group == nil {
		t.Skip("no group other than root's and nobody's to give the socket to")
	}
	sock := statusDaemon(t, group.Name)
	var st syscall.Stat_t
	if err := syscall.Stat(sock, &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&0o7777 != 0o660 || strconv.Itoa(int(st.Gid)) != group.Gid || st.Uid != 0 {
		t.Fatalf("socket mode %#o uid %d gid %d, want 0660 uid 0 gid %s", st.Mode&0o7777, st.Uid, st.Gid, group.Gid)
	}

	bin := filepath.Join(filepath.Dir(sock), "cand.test")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	asNobody := func(groups ...uint32) (int, string, string) {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), runEnv+"=status -socket "+sock)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: groups}}
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if errors.Is(err, syscall.ENOEXEC) {
			t.Skipf("cannot run the test binary again as another user: %v (an emulated architecture: qemu-user runs this test, the kernel cannot)", err)
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errOut.String()
	}
	code, out, errOut := asNobody()
	want := "cand status: " + sock + ": permission denied: run as root or as a member of group " + group.Name + "\n"
	if code != exitDenied || out != "" || errOut != want {
		t.Errorf("outside the group: exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errOut, exitDenied, want)
	}
	g, _ := strconv.Atoi(group.Gid)
	code, out, errOut = asNobody(uint32(g))
	if code != 0 || !strings.HasPrefix(out, "1: sim0: interface vcan0 ") {
		t.Errorf("in group %s: exit %d, stdout %q, stderr %q; want the status", group.Name, code, out, errOut)
	}
}

// retryEINTR calls f again while it fails with EINTR.
func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if !errors.Is(err, unix.EINTR) {
			return n, err
		}
	}
}
