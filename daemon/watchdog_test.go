package daemon

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"cand/internal/waitfor"
)

// notifySocket is the test's stand-in for systemd's notification socket: it sets
// NOTIFY_SOCKET and, for a watchdog interval above 0, WATCHDOG_USEC (and
// WATCHDOG_PID, this process) for the daemon the test starts next.
type notifySocket struct {
	t *testing.T
	c *net.UnixConn
}

func newNotifySocket(t *testing.T, watchdog time.Duration) *notifySocket {
	path := filepath.Join(t.TempDir(), "notify")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	if watchdog > 0 {
		t.Setenv("WATCHDOG_USEC", strconv.FormatInt(watchdog.Microseconds(), 10))
		t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	}
	return &notifySocket{t: t, c: c}
}

// pings reads notifications until d has passed and counts the WATCHDOG=1 among them.
func (s *notifySocket) pings(d time.Duration) int {
	n := 0
	deadline := time.Now().Add(d)
	buf := make([]byte, 256)
	for {
		s.c.SetReadDeadline(deadline)
		k, err := s.c.Read(buf)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				return n
			}
			s.t.Fatal(err)
		}
		for _, line := range strings.Split(string(buf[:k]), "\n") {
			if line == "WATCHDOG=1" {
				n++
			}
		}
	}
}

// systemd's watchdog protocol under full RX load and TX at 1 kHz: WATCHDOG=1 keeps
// arriving, every half interval. When the owner thread is wedged — the virtual Pi's
// peripheral bus stops answering, so its next register access never returns — the
// heartbeat goes stale and WATCHDOG=1 stops within the freshness rule (half the
// interval): at most the one tick that falls within it after the wedge, then none.
func TestWatchdogUnderLoadAndWhenWedged(t *testing.T) {
	const iv = time.Second // WATCHDOG_USEC: ticks every iv/2, fresh while younger than iv/2
	sock := newNotifySocket(t, iv)
	const n = 3000
	lr := startLoadRig(t, 500*time.Microsecond, n)
	sent := make(chan struct{})
	go func() { defer close(sent); lr.sendTX(0, n, time.Millisecond) }()
	t.Cleanup(func() { <-sent }) // before the rig closes the socket

	// Healthy: about six ticks in three seconds; the test allows two to be late on
	// a busy machine.
	got := sock.pings(3 * time.Second)
	t.Logf("%d WATCHDOG=1 in 3 s under load; %+v", got, lr.d.Owner.LoopStats())
	if got < 4 {
		t.Fatalf("%d WATCHDOG=1 in 3 s under load, want at least 4 (one per %v)", got, iv/2)
	}

	stall := lr.pi.BusStall()
	stall.Stall()
	t.Cleanup(stall.Resume) // before the rig stops the daemon
	waitfor.Cond(t, 5*time.Second, "the owner thread to wedge on the stalled bus", func() bool { return stall.Waiting() > 0 })
	sock.pings(10 * time.Millisecond) // what was sent before the wedge
	if got := sock.pings(4 * iv / 2); got > 1 {
		t.Fatalf("%d WATCHDOG=1 in the four ticks after the owner thread wedged, want at most 1", got)
	}
}
