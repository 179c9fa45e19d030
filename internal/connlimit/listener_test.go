package connlimit

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// start serves h on a Listener bounded to n; tls selects HTTPS.
func start(t *testing.T, n int, h http.Handler, useTLS bool) (*httptest.Server, *Listener) {
	t.Helper()
	ts := httptest.NewUnstartedServer(h)
	l := New(ts.Listener, n)
	ts.Listener = l
	ts.Config.ConnState = l.ConnState
	ts.Config.IdleTimeout = time.Minute // far beyond each test: only giving way closes idle connections
	if useTLS {
		ts.StartTLS()
	} else {
		ts.Start()
	}
	t.Cleanup(ts.Close)
	return ts, l
}

// client is a client with its own connection pool.
func client(ts *httptest.Server) *http.Client {
	tr := ts.Client().Transport.(*http.Transport).Clone()
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func get(c *http.Client, url string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// More clients than the bound: never more than the bound are served at once, and
// every client is served in its turn.
func TestBound(t *testing.T) {
	const bound, clients = 2, 6
	var inflight, most atomic.Int32
	entered := make(chan struct{}, clients)
	release := make(chan struct{})
	ts, l := start(t, bound, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		entered <- struct{}{}
		<-release
	}), false)
	errs := make(chan error, clients)
	for range clients {
		c := client(ts)
		go func() { errs <- get(c, ts.URL) }()
	}
	for i := 1; i <= clients; i++ {
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d clients served in 10 s", i-1, clients)
		}
		if i == bound && l.Open() != bound {
			t.Errorf("%d connections open with %d requests in the handler, want %d", l.Open(), bound, bound)
		}
		if i >= bound {
			release <- struct{}{} // one request ends: the next may start
		}
	}
	for range bound - 1 {
		release <- struct{}{}
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if m := most.Load(); m != bound {
		t.Errorf("%d requests served at once, want %d", m, bound)
	}
}

// With the bound reached by idle keep-alive connections, a new client is served at
// once (the idle timeout is a minute): the idle connections give way, over plain
// HTTP and over TLS.
func TestIdleGivesWay(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		name := "http"
		if useTLS {
			name = "tls"
		}
		t.Run(name, func(t *testing.T) {
			ts, l := start(t, 2, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), useTLS)
			idle := []*http.Client{client(ts), client(ts)}
			for _, c := range idle {
				if err := get(c, ts.URL); err != nil {
					t.Fatal(err)
				}
			}
			if l.Open() != 2 {
				t.Fatalf("%d connections open, want the 2 idle ones", l.Open())
			}
			// The client gives up after 10 s, long before the idle timeout.
			if err := get(client(ts), ts.URL); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Closing the listener ends an Accept that waits for a place, and closes the
// connection it held.
func TestCloseWhileWaiting(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := New(inner, 1)
	first, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	c1, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	second, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	accepted := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			c.Close()
			err = errors.New("accepted beyond the bound")
		}
		accepted <- err
	}()
	l.Close()
	select {
	case err := <-accepted:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Accept still waiting 10 s after Close")
	}
	// The held connection was closed (or, had Accept not reached it yet, the
	// listener's close reset it).
	second.SetReadDeadline(time.Now().Add(10 * time.Second))
	var ne net.Error
	if _, err := second.Read(make([]byte, 1)); err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("held connection: read %v, want it closed", err)
	}
}

// A connection's place is freed once, however often it is closed.
func TestCloseTwice(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := New(inner, 2)
	defer l.Close()
	var wg sync.WaitGroup
	conns := make([]net.Conn, 2)
	for i := range conns {
		d, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if conns[i], err = l.Accept(); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conns[0].Close()
		}()
	}
	wg.Wait()
	if l.Open() != 1 {
		t.Errorf("%d open after closing one of two three times, want 1", l.Open())
	}
	conns[1].Close()
}
