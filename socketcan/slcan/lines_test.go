package slcan

import (
	"reflect"
	"strings"
	"testing"
)

type seen struct {
	line    string
	tooLong bool
}

func feed(l *Lines, parts ...string) []seen {
	var out []seen
	for _, p := range parts {
		l.Feed([]byte(p), func(line []byte, tooLong bool) {
			out = append(out, seen{string(line), tooLong})
		})
	}
	return out
}

func TestLinesSplitsAtCRAndBEL(t *testing.T) {
	var l Lines
	got := feed(&l, "C\rS6\rO", "\r\rt12", "30\at3212AABB\rt1")
	want := []seen{{"C", false}, {"S6", false}, {"O", false}, {"", false}, {"t1230", false}, {"t3212AABB", false}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if l.Pending() != 2 {
		t.Fatalf("pending %d, want 2 (\"t1\")", l.Pending())
	}
}

func TestLinesTooLong(t *testing.T) {
	var l Lines
	long := strings.Repeat("7", MaxLine)
	got := feed(&l, long+"\r", long+"8", strings.Repeat("9", 5000), "\rO\r")
	want := []seen{{long, false}, {"", true}, {"O", false}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}
