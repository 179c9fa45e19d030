package journal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// Options configure a Handler.
type Options struct {
	// Level is the lowest level sent; default Info.
	Level slog.Leveler
	// Identifier is SYSLOG_IDENTIFIER, what journalctl shows as the program and
	// -t selects; default "cand".
	Identifier string
}

// Handler sends each record as one journal entry. It is safe for concurrent
// use; each record is one datagram, so entries from different goroutines do
// not interleave.
type Handler struct {
	out    *sink
	opt    Options
	attrs  []byte // the fields of WithAttrs, already encoded
	prefix string // WithGroup's groups, each followed by _
}

var _ slog.Handler = (*Handler)(nil)

// sink is the datagram socket, shared by a Handler and those derived from it.
// It is not connected: each entry is sent to the journal's address, so that
// one with a memfd can go the same way (sendmsg(2) with SCM_RIGHTS). A send
// blocks while journald's queue is full, as a write to a journal stream does.
type sink struct {
	fd   int
	addr *unix.SockaddrUnix
}

// Dial opens a socket to the journal at path (SocketPath unless a test has its
// own) and checks that something listens there.
func Dial(path string, opt Options) (*Handler, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("journal: socket: %w", err)
	}
	s := &sink{fd: fd, addr: &unix.SockaddrUnix{Name: path}}
	// A throwaway connect says whether journald listens there; s itself stays
	// unconnected so that it reaches a journald restarted since.
	probe, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		err = unix.Connect(probe, s.addr)
		unix.Close(probe)
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("journal: %s: %w", path, err)
	}
	if opt.Level == nil {
		opt.Level = slog.LevelInfo
	}
	if opt.Identifier == "" {
		opt.Identifier = "cand"
	}
	return &Handler{out: s, opt: opt}, nil
}

// Close closes the socket (of every Handler derived from h).
func (h *Handler) Close() error { return unix.Close(h.out.fd) }

func (h *Handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.opt.Level.Level() }

func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]byte(nil), h.attrs...)
	for _, a := range as {
		c.attrs = appendAttr(c.attrs, h.prefix, a)
	}
	return &c
}

func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.prefix += name + "_"
	return &c
}

// Handle sends r: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, the source location,
// then the handler's and the record's attributes. The record's time is not
// sent: journald stamps the entry when it receives it.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	b := make([]byte, 0, 256)
	b = appendField(b, "MESSAGE", r.Message)
	b = appendField(b, "PRIORITY", strconv.Itoa(priority(r.Level)))
	b = appendField(b, "SYSLOG_IDENTIFIER", h.opt.Identifier)
	if r.PC != 0 {
		f, _ := runtime.CallersFrames([]uintptr{r.PC}).Next()
		if f.File != "" {
			b = appendField(b, "CODE_FILE", f.File)
			b = appendField(b, "CODE_LINE", strconv.Itoa(f.Line))
			b = appendField(b, "CODE_FUNC", f.Function)
		}
	}
	b = append(b, h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		b = appendAttr(b, h.prefix, a)
		return true
	})
	return h.out.send(b)
}

// send writes one entry: a datagram, or, when the entry is larger than a
// datagram may be, a sealed memfd holding it passed with SCM_RIGHTS in an
// empty datagram (the protocol's way for large entries).
func (s *sink) send(entry []byte) error {
	err := unix.Sendmsg(s.fd, entry, nil, s.addr, 0)
	if !errors.Is(err, unix.EMSGSIZE) && !errors.Is(err, unix.ENOBUFS) {
		return err
	}
	fd, err := unix.MemfdCreate("cand-journal", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return fmt.Errorf("journal: entry of %d bytes too large for a datagram; memfd_create: %w", len(entry), err)
	}
	defer unix.Close(fd)
	for rest := entry; len(rest) > 0; {
		n, err := unix.Write(fd, rest)
		if err != nil {
			return fmt.Errorf("journal: writing the memfd: %w", err)
		}
		rest = rest[n:]
	}
	// journald accepts only a memfd that can no longer change.
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL); err != nil {
		return fmt.Errorf("journal: sealing the memfd: %w", err)
	}
	return unix.Sendmsg(s.fd, nil, unix.UnixRights(fd), s.addr, 0)
}
