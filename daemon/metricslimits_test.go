package daemon

import (
	"bufio"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// endpoint is the daemon's metrics server as a raw client sees it, over plain
// HTTP or over TLS with basic authentication, so that a test controls each
// connection and each byte.
type endpoint struct {
	t    *testing.T
	r    *rig
	tls  *tls.Config // nil: plain HTTP
	auth string      // Authorization header line, or ""
}

// startEndpoint starts the daemon of c, with TLS and basic authentication when
// secure, and returns its endpoint.
func startEndpoint(t *testing.T, c *rigConfig, secure bool) *endpoint {
	t.Helper()
	if !secure {
		return &endpoint{t: t, r: c.start()}
	}
	e := startSecure(t, c)
	cred := base64.StdEncoding.EncodeToString([]byte(metricsUser + ":" + metricsPassword))
	cfg := e.cert.ClientConfig()
	cfg.ServerName = "127.0.0.1"
	return &endpoint{t: t, r: e.r, tls: cfg, auth: "Authorization: Basic " + cred + "\r\n"}
}

// forEachScheme runs test over plain HTTP and over TLS with basic authentication.
func forEachScheme(t *testing.T, test func(t *testing.T, secure bool)) {
	t.Run("http", func(t *testing.T) { test(t, false) })
	t.Run("https", func(t *testing.T) { test(t, true) })
}

// tcp opens a TCP connection and nothing more (no TLS handshake, no request).
func (e *endpoint) tcp() net.Conn {
	e.t.Helper()
	c, err := net.Dial("tcp", e.r.d.MetricsAddr)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// conn opens a connection ready for requests: TCP, and the TLS handshake when
// the endpoint has TLS.
func (e *endpoint) conn() net.Conn {
	e.t.Helper()
	c, err := e.handshake(e.tcp())
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// handshake makes the TLS handshake on c (within 10 s) when the endpoint has TLS.
func (e *endpoint) handshake(c net.Conn) (net.Conn, error) {
	if e.tls == nil {
		return c, nil
	}
	tc := tls.Client(c, e.tls)
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	defer tc.SetDeadline(time.Time{})
	return tc, tc.Handshake()
}

// request is a scrape's bytes.
func (e *endpoint) request() string {
	return "GET /metrics HTTP/1.1\r\nHost: cand\r\n" + e.auth + "\r\n"
}

// scrape sends a request on c and reads the answer (within 10 s).
func (e *endpoint) scrape(c net.Conn, br *bufio.Reader) (*http.Response, error) {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := io.WriteString(c, e.request()); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp, err
}

// waitClosed waits up to d for the server to close c: a read that ends in EOF or
// a reset, not in the deadline.
func waitClosed(t *testing.T, c net.Conn, d time.Duration, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("%s: still open after %v", what, d)
	}
}

// A keep-alive connection serves one scrape after another, and is closed once it
// has been idle for idle_timeout (the read timeout is far longer).
func TestMetricsIdleTimeout(t *testing.T) {
	forEachScheme(t, func(t *testing.T, secure bool) {
		e := startEndpoint(t, newRigConfig(t).metricsKey("idle_timeout", "300ms").metricsKey("read_timeout", "1m"), secure)
		c := e.conn()
		br := bufio.NewReader(c)
		for i := range 2 {
			resp, err := e.scrape(c, br)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("scrape %d on one connection: %v %v", i, resp, err)
			}
		}
		waitClosed(t, c, 10*time.Second, "idle keep-alive connection")
	})
}

// A client that connects and sends nothing, and one that sends its request a
// byte at a time, are cut off at read_timeout: neither holds a connection longer.
func TestMetricsReadTimeout(t *testing.T) {
	forEachScheme(t, func(t *testing.T, secure bool) {
		e := startEndpoint(t, newRigConfig(t).metricsKey("read_timeout", "300ms"), secure)
		silent := e.tcp()
		slow := e.conn()
		sent := make(chan int, 1)
		go func() {
			req := e.request()
			n := 0
			for ; n < len(req); n++ {
				if _, err := slow.Write([]byte{req[n]}); err != nil {
					break
				}
				time.Sleep(50 * time.Millisecond) // the slow client's pace, not a wait for the server
			}
			sent <- n
		}()
		waitClosed(t, silent, 10*time.Second, "connection without a request")
		waitClosed(t, slow, 10*time.Second, "connection sending a byte every 50 ms")
		slow.Close()
		if n := <-sent; n >= len(e.request()) {
			t.Errorf("the slow client sent its whole request (%d bytes) before it was cut off", n)
		}
	})
}

// With max_connections 2 held by two clients in the middle of their requests, a
// third is not served; when one of them goes, it is.
func TestMetricsConnectionBound(t *testing.T) {
	forEachScheme(t, func(t *testing.T, secure bool) {
		e := startEndpoint(t, newRigConfig(t).metricsKey("max_connections", 2).metricsKey("read_timeout", "1m"), secure)
		var holders []net.Conn
		for range 2 {
			c := e.conn()
			if _, err := io.WriteString(c, "GET /metrics HTTP/1.1\r\n"); err != nil {
				t.Fatal(err)
			}
			holders = append(holders, c)
		}
		third := e.tcp() // connected after the holders: behind them in the accept queue
		served := make(chan error, 1)
		go func() {
			c, err := e.handshake(third)
			if err == nil {
				var resp *http.Response
				if resp, err = e.scrape(c, bufio.NewReader(c)); err == nil && resp.StatusCode != http.StatusOK {
					err = errors.New(resp.Status)
				}
			}
			served <- err
		}()
		select {
		case err := <-served:
			t.Fatalf("third client answered (%v) while two hold the two connections", err)
		case <-time.After(300 * time.Millisecond): // a look for what must not happen
		}
		holders[0].Close()
		select {
		case err := <-served:
			if err != nil {
				t.Fatalf("third client after one holder left: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("third client not served 20 s after one holder left")
		}
	})
}

// A request whose header lines exceed the limit is refused with 431.
func TestMetricsHeaderLimit(t *testing.T) {
	e := startEndpoint(t, newRigConfig(t), false)
	c := e.conn()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	req := "GET /metrics HTTP/1.1\r\nHost: cand\r\nX-Padding: " + strings.Repeat("x", 2*maxHeaderBytes) + "\r\n\r\n"
	io.WriteString(c, req) // the server may close before it has read it all
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("%d-byte header: %v %v, want 431", len(req), resp, err)
	}
}
