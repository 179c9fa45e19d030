package metrics

import (
	"bytes"
	"net/http"
	"sync"
)

// oneAtATime serves its handler's requests one at a time, each into a buffer that
// is written to the client after the turn has passed on, and lets requests that
// wait share the next gathering: however many scrapers there are, gathering and
// encoding the metrics keep at most one core busy, and eight connections scraping
// in a loop cost about one gathering per round, not eight, with the garbage it
// makes. So the owner thread finds a spare P (the Go scheduler's processor) when
// it wakes (daemon/owner.go gives it one more than the CPUs), the collector runs
// less often, and a slow reader holds only its own connection, not the turn.
//
// A shared answer is never older than the request: a request joins only a
// gathering that has not begun, and only one asked for alike (the same Accept,
// Accept-Encoding and query, which choose the format). A request waits until its
// answer is ready or its context ends (the client went away, or the server's
// timeouts cut it off).
type oneAtATime struct {
	h    http.Handler
	turn chan struct{}

	mu     sync.Mutex
	next   map[string]*gathering // by request key: the gathering not yet begun
	joined int                   // requests that joined another's gathering
}

var _ http.Handler = (*oneAtATime)(nil)

// gathering is one run of the handler and the answer it gave.
type gathering struct {
	done   chan struct{}
	joined bool // another request waits for it (o.mu)
	resp   bufferedResponse
}

func newOneAtATime(h http.Handler) *oneAtATime {
	return &oneAtATime{h: h, turn: make(chan struct{}, 1), next: map[string]*gathering{}}
}

func (o *oneAtATime) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Accept") + "\x00" + r.Header.Get("Accept-Encoding") + "\x00" + r.URL.RawQuery
	o.mu.Lock()
	g, joined := o.next[key]
	if joined {
		o.joined++
		g.joined = true
	} else {
		g = &gathering{done: make(chan struct{}), resp: bufferedResponse{header: http.Header{}, code: http.StatusOK}}
		o.next[key] = g
	}
	o.mu.Unlock()
	if !joined {
		// This request runs the gathering, for those that join it too; if its
		// own client goes away first, it runs it only for them.
		select {
		case o.turn <- struct{}{}:
		case <-r.Context().Done():
			o.mu.Lock()
			alone := !g.joined
			if alone {
				delete(o.next, key)
			}
			o.mu.Unlock()
			if alone {
				return
			}
			o.turn <- struct{}{}
		}
		o.mu.Lock()
		delete(o.next, key) // begun: later requests wait for the next one
		o.mu.Unlock()
		o.h.ServeHTTP(&g.resp, r)
		<-o.turn
		close(g.done)
	}
	select {
	case <-g.done:
	case <-r.Context().Done():
		return
	}
	for k, v := range g.resp.header {
		w.Header()[k] = append([]string(nil), v...)
	}
	w.WriteHeader(g.resp.code)
	w.Write(g.resp.body.Bytes())
}

// bufferedResponse is an http.ResponseWriter that keeps the response.
type bufferedResponse struct {
	header http.Header
	code   int
	wrote  bool
	body   bytes.Buffer
}

var _ http.ResponseWriter = (*bufferedResponse)(nil)

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(code int) {
	if !b.wrote {
		b.code, b.wrote = code, true
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.wrote = true
	return b.body.Write(p)
}
