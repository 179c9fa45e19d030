package metrics

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestIndexAndNotFound(t *testing.T) {
	srv := httptest.NewServer(New("v").Handler())
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/"); code != 200 || !strings.Contains(body, `<a href="/metrics">/metrics</a>`) {
		t.Errorf("GET / = %d %q, want 200 and a link to /metrics", code, body)
	}
	if code, _ := get("/nothing"); code != 404 {
		t.Errorf("GET /nothing = %d, want 404", code)
	}
}

func TestAddControllerTwicePanics(t *testing.T) {
	r := New("v")
	r.AddController("can0", "vcan0")
	r.AddController("can1", "vcan1") // a second controller is fine
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, `controller "can0" on interface "vcan0" added twice`) ||
			!strings.Contains(msg, "give every controller a unique name") {
			t.Errorf("panic = %q, want the duplicate named with the fix", msg)
		}
	}()
	r.AddController("can0", "vcan0")
}

func TestServeBadAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = New("v").Serve(context.Background(), ln.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "listen on \""+ln.Addr().String()) ||
		!strings.Contains(err.Error(), "set metrics.listen to a free host:port") {
		t.Errorf("Serve on a busy port: %v, want the address and the fix", err)
	}
}

func TestServeListenerStopsOnCancel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New("v").ServeListener(ctx, ln) }()

	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics = %s", resp.Status)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeListener after cancel = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeListener did not return within 10 s of cancel")
	}
}
