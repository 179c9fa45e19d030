package daemon

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cand/sim"
)

// The socket is mode 0660 whatever the umask; one left by a daemon that is gone
// is replaced; its directory is created if missing.
func TestStatusSocketModeAndStale(t *testing.T) {
	dir := statusDir(t)
	if ln, err := listenStatus(filepath.Join(dir, "new", "status.sock"), ""); err != nil {
		t.Fatalf("in a directory still to be made: %v", err)
	} else {
		ln.Close()
	}
	path := filepath.Join(dir, "status.sock")
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close() // the socket file stays, nobody listens
	ln, err := listenStatus(path, "")
	if err != nil {
		t.Fatalf("over a stale socket: %v", err)
	}
	defer ln.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o660 {
		t.Fatalf("socket mode %v, want a socket with 0660", fi.Mode())
	}
}

// A socket another daemon still serves, or a file that is no socket, is left
// alone, and the error says what to do.
func TestStatusSocketInUse(t *testing.T) {
	dir := statusDir(t)
	busy := filepath.Join(dir, "busy.sock")
	ln, err := listenStatus(busy, "")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{busy, "status: another cand serves " + busy + ": stop it, or give this one another status.socket"},
		{file, "status: " + file + " exists and is not a socket: remove it, or set status.socket to another path"},
	} {
		if l, err := listenStatus(tc.path, ""); err == nil || err.Error() != tc.want {
			if l != nil {
				l.Close()
			}
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
	}
}

// A status.group that does not exist stops cand at start with an error naming it.
func TestStatusGroupMissing(t *testing.T) {
	const group = "cand-no-such-group"
	cfg := newRigConfig(t).statusSocket(filepath.Join(statusDir(t), "status.sock"), group).build()
	pi, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = Run(ctx, cfg, Options{Version: "test", Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Sockets: fds[1:], Sim: pi,
		MetricsListener: ln, Ready: func(*Daemon) { t.Error("ready despite the missing group") }})
	want := `status.group: group "` + group + `" does not exist: create it (groupadd ` + group + `) or set status.group to an existing group, or to "" for the daemon's own`
	if err == nil || err.Error() != want {
		t.Fatalf("Run: %v\nwant %s", err, want)
	}
}
