// Package sctest is a socketcand protocol client for tests: raw TCP, each write
// as the test gives it (so a message can be split across writes), each message
// read with a deadline and parsed with package protocol.
package sctest

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"go.einride.tech/can"

	"cand/socketcand/protocol"
)

// Wait bounds each wait for a message.
const Wait = 5 * time.Second

// Client is one connection to a socketcand server.
type Client struct {
	t    testing.TB
	Conn net.Conn
	rd   *protocol.Reader
}

// Dial connects to addr; the connection is closed when the test ends.
func Dial(t testing.TB, addr string) *Client {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &Client{t: t, Conn: conn, rd: protocol.NewReader(conn)}
}

// Raw connects to addr, opens bus and enters raw mode.
func Raw(t testing.TB, addr, bus string) *Client {
	t.Helper()
	c := Dial(t, addr)
	c.Expect(protocol.MsgHi)
	c.Send("< open " + bus + " >")
	c.Expect(protocol.MsgOK)
	c.Send("< rawmode >")
	c.Expect(protocol.MsgOK)
	return c
}

// Send writes each part in a write of its own.
func (c *Client) Send(parts ...string) {
	c.t.Helper()
	for _, p := range parts {
		if _, err := c.Conn.Write([]byte(p)); err != nil {
			c.t.Fatal(err)
		}
	}
}

// Next returns the next message as text, waiting up to Wait.
func (c *Client) Next() (string, error) {
	c.Conn.SetReadDeadline(time.Now().Add(Wait))
	msg, err := c.rd.Next()
	return string(msg), err
}

// NextParsed returns the next message, parsed; a read or parse error fails the test.
func (c *Client) NextParsed() (string, protocol.ServerMessage) {
	c.t.Helper()
	got, err := c.Next()
	if err != nil {
		c.t.Fatalf("waiting for a message: %v", err)
	}
	m, err := protocol.ParseServer([]byte(got))
	if err != nil {
		c.t.Fatalf("%q: %v", got, err)
	}
	return got, m
}

// Expect reads the next message and checks it is want.
func (c *Client) Expect(want string) {
	c.t.Helper()
	got, err := c.Next()
	if err != nil || got != want {
		c.t.Fatalf("got %q (%v), want %q", got, err, want)
	}
}

// ExpectEOF checks that the server hangs up.
func (c *Client) ExpectEOF() {
	c.t.Helper()
	if got, err := c.Next(); !errors.Is(err, io.EOF) {
		c.t.Fatalf("got %q (%v), want the connection closed", got, err)
	}
}

// Frame reads the next message and checks it is the data frame want, received
// after after (at the protocol's microsecond resolution) and not in the future.
func (c *Client) Frame(want can.Frame, after time.Time) {
	c.t.Helper()
	got, m := c.NextParsed()
	if m.Kind != protocol.KindFrame || m.Frame != want {
		c.t.Fatalf("got %q, want frame %v", got, want)
	}
	if m.Time.Before(after.Truncate(time.Microsecond)) || m.Time.After(time.Now()) {
		c.t.Fatalf("%q: time %v is not between %v and now", got, m.Time, after)
	}
}
