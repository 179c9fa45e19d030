// Package journal is a log/slog handler that writes to systemd's journal over
// its native protocol (https://systemd.io/JOURNAL_NATIVE_PROTOCOL/): one unix
// datagram per record to /run/systemd/journal/socket, with MESSAGE, PRIORITY,
// SYSLOG_IDENTIFIER, CODE_FILE, CODE_LINE, CODE_FUNC and each attribute as a
// field of its own (controller=can0 becomes CONTROLLER=can0), so that
// `journalctl -o verbose` shows them and `journalctl CONTROLLER=can0` selects
// by them. StreamIsJournal says whether a service's stderr is the journal, as
// systemd tells it through JOURNAL_STREAM.
//
// Files: stream.go (JOURNAL_STREAM), fields.go (the entry's wire format and
// field names), handler.go (the slog.Handler and the socket, with a sealed
// memfd for entries too large for a datagram).
package journal
