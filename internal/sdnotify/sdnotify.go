// Package sdnotify speaks systemd's notification protocol (sd_notify(3)): one
// datagram of KEY=VALUE lines to $NOTIFY_SOCKET, and the watchdog interval from
// $WATCHDOG_USEC / $WATCHDOG_PID.
package sdnotify

import (
	"net"
	"os"
	"strconv"
	"time"
)

// Notifier sends to the socket systemd gave the service; a zero Notifier (no
// NOTIFY_SOCKET) does nothing.
type Notifier struct {
	addr string
}

// FromEnv reads NOTIFY_SOCKET.
func FromEnv() Notifier { return Notifier{addr: os.Getenv("NOTIFY_SOCKET")} }

// Enabled reports whether systemd is listening.
func (n Notifier) Enabled() bool { return n.addr != "" }

// Send sends state, e.g. "READY=1" or "STATUS=...\nWATCHDOG=1". A leading '@' is an
// abstract socket; Go's syscall package maps it to a leading NUL.
func (n Notifier) Send(state string) error {
	if n.addr == "" {
		return nil
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: n.addr, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(state))
	return err
}

// WatchdogInterval returns systemd's watchdog timeout for this process, or 0.
func WatchdogInterval() time.Duration {
	us, err := strconv.ParseInt(os.Getenv("WATCHDOG_USEC"), 10, 64)
	if err != nil || us <= 0 {
		return 0
	}
	if pid := os.Getenv("WATCHDOG_PID"); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return 0
	}
	return time.Duration(us) * time.Microsecond
}
