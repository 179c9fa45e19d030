// Package journaltest stands in for systemd's journal in tests: a unix datagram
// socket where journald's would be, the entries read from it as journald reads
// them, and a stderr that JOURNAL_STREAM names as systemd names the stream it
// connected a service's output to (systemd.exec(5), $JOURNAL_STREAM).
package journaltest

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Socket is a unix datagram socket in a temporary directory standing in for
// /run/systemd/journal/socket; it is closed when the test ends.
func Socket(t testing.TB) (path string, conn *net.UnixConn) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "socket")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return path, conn
}

// Receive reads one entry as journald would: the datagram, or the memfd it
// carries (which must be sealed). No entry within 5 s fails the test.
func Receive(t testing.TB, conn *net.UnixConn) (entry []byte, viaMemfd bool) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf, oob := make([]byte, 1<<16), make([]byte, 64)
	n, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		t.Fatalf("no entry: %v", err)
	}
	if oobn == 0 {
		return buf[:n], false
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		t.Fatalf("control message: %v %v", msgs, err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 || n != 0 {
		t.Fatalf("rights %v, %v; datagram of %d bytes beside them", fds, err, n)
	}
	f := os.NewFile(uintptr(fds[0]), "memfd")
	defer f.Close()
	seals, err := unix.FcntlInt(f.Fd(), unix.F_GET_SEALS, 0)
	if want := unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE | unix.F_SEAL_SEAL; err != nil || seals&want != want {
		t.Fatalf("memfd seals %#x, %v; want %#x", seals, err, want)
	}
	var b bytes.Buffer // from offset 0, as journald maps it
	if _, err := b.ReadFrom(io.NewSectionReader(f, 0, 1<<30)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), true
}

// Stream is a file in a temporary directory that JOURNAL_STREAM names (for the
// rest of the test), as systemd names the stream it connected a service's
// stderr to: "DEVICE:INODE" of the file.
func Stream(t testing.TB) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	t.Setenv("JOURNAL_STREAM", fmt.Sprintf("%d:%d", st.Dev, st.Ino))
	return f
}
