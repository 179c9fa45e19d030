package slcan

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAttach sets N_SLCAN on a pseudo-terminal; without the slcan line
// discipline (or CAP_NET_ADMIN) it checks that the error names the fix.
func TestAttach(t *testing.T) {
	tty, err := Attach()
	switch {
	case errors.Is(err, unix.EINVAL):
		if msg := err.Error(); !strings.Contains(msg, "modprobe slcan") {
			t.Fatalf("error does not name the fix: %v", err)
		}
		t.Skipf("this kernel has no slcan line discipline: %v", err)
	case errors.Is(err, unix.EPERM):
		t.Skipf("no CAP_NET_ADMIN: %v", err)
	case err != nil:
		t.Fatal(err)
	}
	defer tty.Close()
	if tty.Netdev == "" {
		t.Fatal("the kernel named no netdev")
	}
}

// TestPTYCarriesBytesUnchanged: CR, BEL and every other byte cross a raw
// pseudo-terminal as written, both ways.
func TestPTYCarriesBytesUnchanged(t *testing.T) {
	m, s, err := OpenPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer m.Close()
	defer s.Close()
	var all [256]byte
	for i := range all {
		all[i] = byte(i)
	}
	for _, dir := range []struct {
		name string
		w    io.Writer
		r    io.Reader
	}{{"master to slave", m, s}, {"slave to master", s, m}} {
		if _, err := dir.w.Write(all[:]); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, 0, len(all))
		buf := make([]byte, 512)
		deadline := time.Now().Add(10 * time.Second)
		for len(got) < len(all) {
			if f, ok := dir.r.(interface{ SetReadDeadline(time.Time) error }); ok {
				f.SetReadDeadline(deadline)
			}
			n, err := dir.r.Read(buf)
			if err != nil {
				t.Fatalf("%s: after %d bytes: %v", dir.name, len(got), err)
			}
			got = append(got, buf[:n]...)
		}
		if string(got) != string(all[:]) {
			t.Fatalf("%s: bytes changed:\n% x", dir.name, got)
		}
	}
}
