package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cand/internal/journal/journaltest"
)

// parse decodes an entry in the native format into its fields, in order.
func parse(t *testing.T, e []byte) [][2]string {
	t.Helper()
	var out [][2]string
	for len(e) > 0 {
		nl := bytes.IndexByte(e, '\n')
		if nl < 0 {
			t.Fatalf("field without newline: %q", e)
		}
		if eq := bytes.IndexByte(e[:nl], '='); eq >= 0 {
			out = append(out, [2]string{string(e[:eq]), string(e[eq+1 : nl])})
			e = e[nl+1:]
			continue
		}
		name := string(e[:nl])
		e = e[nl+1:]
		if len(e) < 8 {
			t.Fatalf("%s: no length", name)
		}
		n := binary.LittleEndian.Uint64(e)
		if uint64(len(e)) < 8+n+1 || e[8+n] != '\n' {
			t.Fatalf("%s: length %d beyond the entry", name, n)
		}
		out = append(out, [2]string{name, string(e[8 : 8+n])})
		e = e[8+n+1:]
	}
	return out
}

func fieldsOf(t *testing.T, e []byte) map[string]string {
	m := map[string]string{}
	for _, f := range parse(t, e) {
		if _, dup := m[f[0]]; dup {
			t.Errorf("field %s twice", f[0])
		}
		m[f[0]] = f[1]
	}
	return m
}

func TestEntryFields(t *testing.T) {
	path, conn := journaltest.Socket(t)
	h, err := Dial(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	log := slog.New(h)
	_, _, line, _ := runtimeCaller()
	log.Warn("chip lost", "controller", "can0", "retries", 3, "err", errors.New("READ STATUS 0xFF"),
		"sclk-range", "1..2", "message", "an attribute", "9lives", true, slog.Group("spi", "clock_hz", 10_000_000, slog.Group("cs", "pin", 8)),
		"d", 1500*time.Microsecond)
	e, viaMemfd := journaltest.Receive(t, conn)
	if viaMemfd {
		t.Error("a small entry came through a memfd")
	}
	got := fieldsOf(t, e)
	want := map[string]string{
		"MESSAGE": "chip lost", "PRIORITY": "4", "SYSLOG_IDENTIFIER": "cand",
		"CONTROLLER": "can0", "RETRIES": "3", "ERR": "READ STATUS 0xFF", "SCLK_RANGE": "1..2",
		"ATTR_MESSAGE": "an attribute", "F9LIVES": "true", "SPI_CLOCK_HZ": "10000000", "SPI_CS_PIN": "8", "D": "1.5ms",
		"CODE_FILE": got["CODE_FILE"], "CODE_LINE": fmt.Sprint(line + 1), "CODE_FUNC": "cand/internal/journal.TestEntryFields",
	}
	if !strings.HasSuffix(got["CODE_FILE"], "internal/journal/journal_test.go") {
		t.Errorf("CODE_FILE %q", got["CODE_FILE"])
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s=%q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("fields %v\nwant %v", got, want)
	}
	if f := parse(t, e); f[0][0] != "MESSAGE" || f[1][0] != "PRIORITY" {
		t.Errorf("entry starts %v, want MESSAGE then PRIORITY", f[:2])
	}
}

// A value with a newline takes the binary-safe form: NAME, newline, a
// little-endian 64-bit length, the value, newline.
func TestNewlineValueIsBinarySafe(t *testing.T) {
	path, conn := journaltest.Socket(t)
	h, _ := Dial(path, Options{Identifier: "x"})
	defer h.Close()
	h.Handle(t.Context(), slog.NewRecord(time.Time{}, slog.LevelError, "two\nlines", 0))
	e, _ := journaltest.Receive(t, conn)
	want := append([]byte("MESSAGE\n\x09\x00\x00\x00\x00\x00\x00\x00two\nlines\n"), "PRIORITY=3\nSYSLOG_IDENTIFIER=x\n"...)
	if !bytes.Equal(e, want) {
		t.Fatalf("entry\n%q\nwant\n%q", e, want)
	}
}

func TestWithAttrsAndGroupsAndLevel(t *testing.T) {
	path, conn := journaltest.Socket(t)
	h, _ := Dial(path, Options{Level: slog.LevelInfo})
	defer h.Close()
	log := slog.New(h).With("controller", "can1").WithGroup("tx").With("buffer", 2)
	if log.Enabled(t.Context(), slog.LevelDebug) {
		t.Error("Debug enabled at level Info")
	}
	log.Debug("not sent")
	log.Info("sent", "frames", 5)
	got := fieldsOf(t, func() []byte { e, _ := journaltest.Receive(t, conn); return e }())
	for k, v := range map[string]string{"MESSAGE": "sent", "PRIORITY": "6", "CONTROLLER": "can1", "TX_BUFFER": "2", "TX_FRAMES": "5"} {
		if got[k] != v {
			t.Errorf("%s=%q, want %q (entry %v)", k, got[k], v, got)
		}
	}
}

// An entry larger than the socket takes as one datagram goes in a sealed memfd.
func TestLargeEntryGoesThroughMemfd(t *testing.T) {
	path, conn := journaltest.Socket(t)
	h, _ := Dial(path, Options{})
	defer h.Close()
	if err := unix.SetsockoptInt(h.out.fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 4096); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 64<<10)
	r := slog.NewRecord(time.Time{}, slog.LevelInfo, "big", 0)
	r.AddAttrs(slog.String("blob", big))
	if err := h.Handle(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	e, viaMemfd := journaltest.Receive(t, conn)
	if got := fieldsOf(t, e); !viaMemfd || got["BLOB"] != big || got["MESSAGE"] != "big" {
		t.Fatalf("via memfd %v, %d bytes, BLOB of %d bytes", viaMemfd, len(e), len(got["BLOB"]))
	}
}

func TestDialWithoutJournal(t *testing.T) {
	_, err := Dial(filepath.Join(t.TempDir(), "socket"), Options{})
	if !errors.Is(err, unix.ENOENT) {
		t.Fatalf("Dial of a missing socket = %v, want ENOENT", err)
	}
}

func TestFieldNames(t *testing.T) {
	for in, want := range map[string]string{
		"controller": "CONTROLLER", "sclk_hz": "SCLK_HZ", "a.b-c d": "A_B_C_D", "_x": "F_X", "": "F",
		"priority": "ATTR_PRIORITY", "Code_File": "ATTR_CODE_FILE", strings.Repeat("a", 70): strings.Repeat("A", 64),
	} {
		if got := fieldName(in); got != want {
			t.Errorf("fieldName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPriority(t *testing.T) {
	for l, want := range map[slog.Level]int{slog.LevelError + 4: 3, slog.LevelError: 3, slog.LevelWarn: 4, slog.LevelInfo: 6, slog.LevelInfo + 1: 6, slog.LevelDebug: 7, slog.LevelDebug - 4: 7} {
		if got := priority(l); got != want {
			t.Errorf("priority(%v) = %d, want %d", l, got, want)
		}
	}
}

func TestStreamIsJournal(t *testing.T) {
	f := journaltest.Stream(t)
	if !StreamIsJournal(f) {
		t.Error("JOURNAL_STREAM names f, but StreamIsJournal(f) is false")
	}
	other, _ := os.CreateTemp(t.TempDir(), "other")
	defer other.Close()
	if StreamIsJournal(other) {
		t.Error("output redirected elsewhere, but StreamIsJournal is true")
	}
	t.Setenv("JOURNAL_STREAM", "")
	if StreamIsJournal(f) {
		t.Error("no JOURNAL_STREAM, but StreamIsJournal is true")
	}
}
