package config

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// loadErr runs Load(path) with a deadline, so that a FIFO or a device that blocks
// fails the test instead of hanging it, and returns the error text ("" on success).
func loadErr(t *testing.T, path string) string {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := Load(path)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			return ""
		}
		return err.Error()
	case <-time.After(10 * time.Second):
		t.Fatalf("Load(%q) still blocked after 10s", path)
		return ""
	}
}

// Every way the path can fail to be a readable YAML file has its own message,
// naming the cause and the fix; none blocks, and none reads without bound.
func TestLoadFileErrors(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	write := func(name, body string) string {
		if err := os.WriteFile(at(name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return at(name)
	}
	fifo := at("fifo.yaml")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := at("sock.yaml")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	file := write("cand.yaml", ok500)
	if err := os.Symlink(fifo, at("link-to-fifo.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(at("loop-b"), at("loop-a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(at("loop-a"), at("loop-b")); err != nil {
		t.Fatal(err)
	}
	big := write("big.yaml", ok500+"#"+strings.Repeat("x", MaxFileSize-len(ok500)-2)+"\n")
	if err := os.Truncate(write("huge.yaml", ok500), MaxFileSize+1); err != nil {
		t.Fatal(err)
	}

	const notAFile = "not a file: give the path of a YAML file"
	for _, tc := range []struct{ path, want string }{
		{at("missing.yaml"), "no such file: " + at("missing.yaml") + ": create it from deploy/cand.yaml or give -config PATH"},
		{at("missing/cand.yaml"), "no such file: " + at("missing/cand.yaml") + ": create it from deploy/cand.yaml or give -config PATH"},
		{dir, dir + " is a directory, " + notAFile + ", e.g. " + dir + "/cand.yaml"},
		{fifo, fifo + " is a FIFO (named pipe), " + notAFile},
		{at("link-to-fifo.yaml"), at("link-to-fifo.yaml") + " is a FIFO (named pipe), " + notAFile},
		{sock, sock + " is a socket, " + notAFile},
		{file + "/x.yaml", "cannot read " + file + "/x.yaml: a part of the path before the file name is not a directory: give the path of a YAML file"},
		{at("loop-a"), "cannot read " + at("loop-a") + ": too many levels of symbolic links: give the path of a YAML file"},
		{at("huge.yaml"), at("huge.yaml") + ": file larger than 1 MiB: a cand configuration is a few KiB; give the path of the right file with -config"},
		{write("empty.yaml", ""), at("empty.yaml") + ": the file is empty; give at least one controller, e.g.\n  controllers:\n    - bitrate: 500000\n(deploy/cand.yaml is a commented example)"},
		{file, ""},
		{big, ""}, // exactly MaxFileSize bytes
	} {
		if got := loadErr(t, tc.path); got != tc.want {
			t.Errorf("Load(%q):\ngot  %s\nwant %s", tc.path, got, tc.want)
		}
	}
	if fi, err := os.Stat(big); err != nil || fi.Size() != MaxFileSize {
		t.Errorf("big.yaml: %v, %v; want %d bytes", fi, err, MaxFileSize)
	}
	if _, err := Load(at("missing.yaml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file's error %v is not fs.ErrNotExist", err)
	}
}

// Devices are refused before they are opened: /dev/zero would be read forever.
func TestLoadDevice(t *testing.T) {
	for _, dev := range []string{"/dev/zero", "/dev/null"} {
		if fi, err := os.Stat(dev); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
			t.Skipf("%s is not a character device here (%v)", dev, err)
		}
		if got, want := loadErr(t, dev), dev+" is a character device, not a file: give the path of a YAML file"; got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}

// A file whose size stat does not know, or that grows while it is read, is read
// only up to the limit.
func TestReadLimited(t *testing.T) {
	n := 0
	endless := readerFunc(func(b []byte) (int, error) {
		n += len(b)
		return len(b), nil
	})
	data, err := readLimited("/proc/x", endless)
	const want = "/proc/x: file larger than 1 MiB: a cand configuration is a few KiB; give the path of the right file with -config"
	if data != nil || err == nil || err.Error() != want {
		t.Errorf("got %d bytes, %v\nwant %s", len(data), err, want)
	}
	if n > MaxFileSize+1 {
		t.Errorf("read %d bytes, want at most %d", n, MaxFileSize+1)
	}
	data, err = readLimited("x", strings.NewReader(ok500))
	if string(data) != ok500 || err != nil {
		t.Errorf("got %q, %v", data, err)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(b []byte) (int, error) { return f(b) }

// Parse refuses more than MaxFileSize bytes as Load does.
func TestParseTooLarge(t *testing.T) {
	data := []byte(ok500 + "#" + strings.Repeat("x", MaxFileSize) + "\n")
	const want = "x.yaml: file larger than 1 MiB: a cand configuration is a few KiB; give the path of the right file with -config"
	if got := parseErr(t, "x.yaml", string(data)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// A file cand may not read says so and how to fix it. As root, the check runs on
// a thread that has given up root (the thread ends with the test).
func TestLoadPermissionDenied(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cand.yaml")
	if err := os.WriteFile(p, []byte(ok500), 0o600); err != nil {
		t.Fatal(err)
	}
	for d := dir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()) && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755) // the file itself is what is not readable
	}
	var got, skip string
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if unix.Geteuid() == 0 {
			if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, 65534, 65534, 65534); e != 0 {
				skip = "cannot give up root on this thread: " + e.Error()
				return
			}
		}
		if _, err := Load(p); err != nil {
			got = err.Error()
		}
	}()
	<-done
	if skip != "" {
		t.Skip(skip)
	}
	want := "cannot read " + p + ": permission denied: run as root or make it readable by the cand user"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
