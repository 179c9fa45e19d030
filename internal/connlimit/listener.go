// Package connlimit bounds how many connections an HTTP server has open at once.
//
// Listener.Accept waits while the bound is reached instead of accepting and
// closing: a connection beyond the bound stays in the kernel's accept queue, where
// it costs no goroutine, no buffers and no TLS handshake, and is served in its turn
// when a connection closes, so a burst of scrapers is served one after another
// rather than refused. Only one connection beyond the bound is held by the
// process, the one Accept waits with.
//
// While Accept waits, keep-alive connections that are between requests give way:
// each is closed as soon as the server reports it idle (through ConnState), so
// clients that keep connections open without using them cannot keep others out
// for the idle timeout. A request that arrives on such a connection as it is
// closed sees the connection close, as at any server's idle timeout; HTTP clients
// retry an idempotent request on a reused connection.
package connlimit

import (
	"net"
	"net/http"
	"sync"
)

// Listener accepts at most a fixed number of open connections. Set ConnState as
// the http.Server's ConnState so that idle connections give way to waiting ones.
type Listener struct {
	net.Listener
	slots chan struct{} // one element per open connection
	done  chan struct{} // closed by Close
	once  sync.Once

	mu      sync.Mutex
	idle    map[net.Conn]struct{} // as ConnState reported them: the server's view of each connection
	waiting bool                  // Accept holds a connection and waits for a slot
}

var _ net.Listener = (*Listener)(nil)

// New bounds inner to n open connections (at least 1).
func New(inner net.Listener, n int) *Listener {
	return &Listener{Listener: inner, slots: make(chan struct{}, max(n, 1)), done: make(chan struct{}), idle: map[net.Conn]struct{}{}}
}

// Accept accepts the next connection and returns it once it may be served: when
// fewer than the bound are open. Closing the returned connection frees its place.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	select {
	case l.slots <- struct{}{}:
		return &conn{Conn: c, l: l}, nil
	default:
	}
	l.setWaiting(true)
	defer l.setWaiting(false)
	select {
	case l.slots <- struct{}{}:
		return &conn{Conn: c, l: l}, nil
	case <-l.done:
		c.Close()
		return nil, net.ErrClosed
	}
}

// Close stops Accept, also one that waits for a place.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// Open returns the number of accepted connections not yet closed.
func (l *Listener) Open() int { return len(l.slots) }

// ConnState is for http.Server.ConnState: it tracks which connections are idle
// and closes one that goes idle while Accept waits.
func (l *Listener) ConnState(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	if s != http.StateIdle {
		delete(l.idle, c)
		l.mu.Unlock()
		return
	}
	if !l.waiting {
		l.idle[c] = struct{}{}
		l.mu.Unlock()
		return
	}
	l.mu.Unlock()
	closeSocket(c)
}

// setWaiting records whether Accept waits; when it starts to, every idle
// connection is closed.
func (l *Listener) setWaiting(w bool) {
	l.mu.Lock()
	l.waiting = w
	var idle []net.Conn
	if w {
		for c := range l.idle {
			idle = append(idle, c)
		}
		clear(l.idle)
	}
	l.mu.Unlock()
	for _, c := range idle {
		closeSocket(c)
	}
}

// closeSocket closes the socket under c (a *tls.Conn's too): closing a TLS
// connection itself would first write a close_notify alert, which a client that
// does not read can stall.
func closeSocket(c net.Conn) {
	for {
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		c = u.NetConn()
	}
	c.Close()
}

// conn is an accepted connection; closing it frees its place, once.
type conn struct {
	net.Conn
	l    *Listener
	once sync.Once
}

var _ net.Conn = (*conn)(nil)

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { <-c.l.slots })
	return err
}
