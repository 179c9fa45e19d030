package main

import (
	"io"
	"log/slog"
	"os"
	"time"

	"cand/internal/journal"
	"cand/internal/logrl"
)

// Repeated warnings and errors of one kind (message, controller, interface)
// beyond logBurst per logInterval are suppressed and counted.
const (
	logInterval = 10 * time.Second
	logBurst    = 5
)

// logger is cand's log at level: native journal entries when stderr is the
// journal (systemd's JOURNAL_STREAM names it), with every attribute a field of
// its own, else text on stderr. Either way repeated warnings and errors are
// rate-limited (logrl). done writes the pending "suppressed N similar
// messages" lines and closes the journal socket.
func logger(stderr io.Writer, level slog.Level, journalPath string) (log *slog.Logger, done func()) {
	var inner slog.Handler = slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})
	closeJournal := func() {}
	var warn error
	if f, ok := stderr.(*os.File); ok && journal.StreamIsJournal(f) {
		j, err := journal.Dial(journalPath, journal.Options{Level: level})
		if err == nil {
			inner, closeJournal = j, func() { j.Close() }
		} else {
			warn = err
		}
	}
	rl := logrl.New(inner, logrl.Options{Interval: logInterval, Burst: logBurst, Keys: []string{"controller", "interface"}})
	log = slog.New(rl)
	if warn != nil {
		log.Warn("stderr is the journal, but its socket is not reachable: logging text to stderr", "err", warn)
	}
	return log, func() {
		rl.Flush()
		closeJournal()
	}
}
