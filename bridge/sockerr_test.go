package bridge

import (
	"fmt"
	"io"
	"testing"

	"golang.org/x/sys/unix"

	"cand/socketcan"
)

// Each socket error is handled by its cause.
func TestClassifySocketErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want sockErr
	}{
		{unix.EAGAIN, sockFull},
		{unix.ENOBUFS, sockFull},
		{unix.EINTR, sockRetry},
		{unix.ENETDOWN, sockLink},
		{unix.ENODEV, sockLink},
		{unix.ENXIO, sockLink},
		{fmt.Errorf("wrapped: %w", unix.ENETDOWN), sockLink},
		{socketcan.ErrFrameSize, sockFrame},
		{io.EOF, sockFatal},
		{unix.EBADF, sockFatal},
		{unix.EPIPE, sockFatal},
		{io.ErrShortWrite, sockFatal},
	} {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("classify(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
