package journal

import (
	"encoding/binary"
	"log/slog"
	"strings"
)

// Priorities are syslog(3)'s levels, as journald's PRIORITY field takes them.
const (
	prioErr     = 3
	prioWarning = 4
	prioInfo    = 6
	prioDebug   = 7
)

// priority maps a slog level to a syslog priority: Error and above is err,
// Warn warning, Info info, below debug.
func priority(l slog.Level) int {
	switch {
	case l >= slog.LevelError:
		return prioErr
	case l >= slog.LevelWarn:
		return prioWarning
	case l >= slog.LevelInfo:
		return prioInfo
	}
	return prioDebug
}

// maxNameLen is journald's limit on a field name.
const maxNameLen = 64

// reserved are the fields the handler writes itself: an attribute of that name
// becomes ATTR_<name> rather than a second value of the field.
var reserved = map[string]bool{
	"MESSAGE": true, "PRIORITY": true, "SYSLOG_IDENTIFIER": true,
	"CODE_FILE": true, "CODE_LINE": true, "CODE_FUNC": true,
}

// fieldName turns an attribute key (with its groups, joined by _) into a
// journal field name: upper-case letters, digits and underscores, starting
// with a letter (names starting with _ are journald's trusted fields), at most
// 64 characters.
func fieldName(key string) string {
	var b strings.Builder
	for _, r := range key {
		switch {
		case r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if name == "" || name[0] < 'A' || name[0] > 'Z' {
		name = "F" + name
	}
	if reserved[name] {
		name = "ATTR_" + name
	}
	if len(name) > maxNameLen {
		name = name[:maxNameLen]
	}
	return name
}

// appendField appends NAME=value\n, or, for a value with a newline, the
// binary-safe form: NAME\n, the value's length as a little-endian uint64, the
// value, \n.
func appendField(b []byte, name, value string) []byte {
	b = append(b, name...)
	if !strings.ContainsRune(value, '\n') {
		b = append(b, '=')
		b = append(b, value...)
		return append(b, '\n')
	}
	b = append(b, '\n')
	b = binary.LittleEndian.AppendUint64(b, uint64(len(value)))
	b = append(b, value...)
	return append(b, '\n')
}

// appendAttr appends a as fields, its key under prefix; a group's attributes
// each become a field of their own.
func appendAttr(b []byte, prefix string, a slog.Attr) []byte {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "_"
		}
		for _, ga := range v.Group() {
			b = appendAttr(b, p, ga)
		}
		return b
	}
	if a.Key == "" {
		return b
	}
	return appendField(b, fieldName(prefix+a.Key), v.String())
}
