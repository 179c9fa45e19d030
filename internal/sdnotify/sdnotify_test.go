package sdnotify

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestSendReachesSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify")
	l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	t.Setenv("NOTIFY_SOCKET", path)
	n := FromEnv()
	if !n.Enabled() {
		t.Fatal("not enabled")
	}
	if err := n.Send("READY=1\nSTATUS=bridging can0"); err != nil {
		t.Fatal(err)
	}
	l.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 128)
	k, _, err := l.ReadFrom(buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(buf[:k]); got != "READY=1\nSTATUS=bridging can0" {
		t.Fatalf("got %q", got)
	}
}

func TestNoSocketIsSilent(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	if err := FromEnv().Send("READY=1"); err != nil {
		t.Fatal(err)
	}
}

func TestWatchdogInterval(t *testing.T) {
	t.Setenv("WATCHDOG_USEC", "2000000")
	t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	if got := WatchdogInterval(); got != 2*time.Second {
		t.Fatalf("got %v", got)
	}
	t.Setenv("WATCHDOG_PID", "1")
	if got := WatchdogInterval(); got != 0 {
		t.Fatalf("other pid: got %v", got)
	}
}
