package socketcand

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pythonCan returns a python3 that imports python-can (Debian's python3-can
// installs it for /usr/bin/python3, which need not be the python3 on PATH).
// Without one the test is skipped, except in CI (CI=true), where it fails.
func pythonCan(t *testing.T) string {
	t.Helper()
	var tried []string
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		path, err := exec.LookPath(py)
		if err != nil {
			continue
		}
		out, err := exec.Command(path, "-c", "import can; print(can.__version__)").Output()
		if err == nil {
			t.Logf("%s: python-can %s", path, strings.TrimSpace(string(out)))
			return path
		}
		tried = append(tried, path)
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no python3 with python-can (tried %v): install the Debian package python3-can (tools/install-deps.sh)", tried)
	}
	t.Skipf("no python3 with python-can (tried %v): install the Debian package python3-can to run this test", tried)
	return ""
}

// pycanConfig is cand on the virtual Pi with one controller and no SocketCAN
// interface (this kernel may have none), socketcand on a free loopback port,
// and the two peers testdata/pycan_check.py expects. No status socket: the
// default path may be another cand's.
const pycanConfig = `hardware: {backend: sim}
realtime: {priority: 0, mlockall: false}
metrics: {listen: ""}
status: {socket: ""}
socketcand: {enabled: true, listen: "127.0.0.1:0"}
controllers:
  - bitrate: 500000
    interface: {name: can0, kind: none}
    sim:
      peers:
        - {kind: answer, id_offset: 1}
        - {kind: periodic, ids: [0x100], period: 100ms, dlc: 8}
`

// listening is the log line that tells where socketcand listens.
var listening = regexp.MustCompile(`msg="socketcand listening" addr=(\S+)`)

// The real cand binary, on the virtual Pi with interface kind none, driven by
// python-can's own socketcand interface (python-can 4.1, Debian's python3-can):
// periodic peer frames arrive in order, and each frame python-can sends is
// answered by the peer, frame by frame.
func TestPythonCan(t *testing.T) {
	py := pythonCan(t)
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go not on PATH (%v): this test builds cmd/cand", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "cand")
	build := exec.Command(goTool, "build", "-o", bin, "cand/cmd/cand")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "cand.yaml")
	if err := os.WriteFile(cfg, []byte(pycanConfig), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cand := exec.CommandContext(ctx, bin, "-config", cfg)
	stderr, err := cand.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cand.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	var logLines []string
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logLines = append(logLines, sc.Text())
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cand.Process.Signal(syscall.SIGTERM)
		err := cand.Wait()
		<-logDone
		if err != nil || t.Failed() {
			t.Logf("cand log:\n%s", strings.Join(logLines, "\n"))
		}
		if err != nil {
			t.Errorf("cand: %v", err)
		}
	}
	defer stop()

	var hostPort string
	select {
	case hostPort = <-addr:
	case <-logDone:
		t.Fatal("cand exited before socketcand listened")
	case <-time.After(30 * time.Second):
		t.Fatal("socketcand not listening after 30 s")
	}
	host, port, _ := strings.Cut(hostPort, ":")

	check := exec.CommandContext(ctx, py, filepath.Join("testdata", "pycan_check.py"), host, port)
	var pyErr strings.Builder
	check.Stderr = &pyErr
	out, err := check.Output()
	if pyErr.Len() > 0 {
		t.Logf("python stderr:\n%s", pyErr.String())
	}
	if err != nil {
		t.Fatalf("pycan_check.py: %v\nstdout:\n%s", err, out)
	}
	want := "connected\nperiodic 100: 10 frames, consecutive counters\n"
	for i := range 20 {
		var data strings.Builder
		for k := range i % 9 {
			fmt.Fprintf(&data, "%02X", byte(i+k))
		}
		want += fmt.Sprintf("answer %d: 201#%s\n", i, data.String())
	}
	want += "done\n"
	if string(out) != want {
		t.Fatalf("pycan_check.py printed\n%s\nwant\n%s", out, want)
	}
	stop()
}
