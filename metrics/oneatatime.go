package metrics

import (
	"bytes"
	"net/http"
)

// oneAtATime serves its handler's requests one at a time, each into a buffer that
// is written to the client after the turn has passed on. However many scrapers
// there are, gathering and encoding the metrics keep at most one core busy, so
// the owner thread finds a spare P (the Go scheduler's processor) when it wakes
// (daemon/owner.go gives it one more than the CPUs), and a slow reader holds its
// own connection only, not the turn. A request waits for its turn until its
// context ends: the client went away or the server's timeouts cut it off.
type oneAtATime struct {
	h    http.Handler
	turn chan struct{}
}

func newOneAtATime(h http.Handler) *oneAtATime {
	return &oneAtATime{h: h, turn: make(chan struct{}, 1)}
}

func (o *oneAtATime) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case o.turn <- struct{}{}:
	case <-r.Context().Done():
		return
	}
	b := bufferedResponse{header: http.Header{}, code: http.StatusOK}
	o.h.ServeHTTP(&b, r)
	<-o.turn
	for k, v := range b.header {
		w.Header()[k] = v
	}
	w.WriteHeader(b.code)
	w.Write(b.body.Bytes())
}

// bufferedResponse is an http.ResponseWriter that keeps the response.
type bufferedResponse struct {
	header http.Header
	code   int
	wrote  bool
	body   bytes.Buffer
}

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
