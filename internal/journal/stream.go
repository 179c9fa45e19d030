package journal

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// SocketPath is where journald receives native-protocol datagrams.
const SocketPath = "/run/systemd/journal/socket"

// StreamIsJournal reports whether f (stderr) is the stream systemd connected to
// the journal: systemd sets JOURNAL_STREAM to "DEVICE:INODE" of that stream for
// a service whose output goes there, and a program should check that it still
// writes to it (its output may have been redirected since) by comparing with
// fstat(2) of the descriptor (systemd.exec(5), $JOURNAL_STREAM).
func StreamIsJournal(f *os.File) bool {
	v := os.Getenv("JOURNAL_STREAM")
	if v == "" || f == nil {
		return false
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return false
	}
	return v == fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}
