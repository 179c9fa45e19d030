package promtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Server is a running Prometheus server.
type Server struct {
	// URL is its base URL, http://127.0.0.1:port.
	URL string
}

// readyEvery is how often Start asks whether the server is ready and has scraped.
const readyEvery = 50 * time.Millisecond

// Start runs the Prometheus server bin on a free loopback port, scraping target
// (host:port, path /metrics) every second with its storage in a temporary
// directory, and returns once the server is ready and has scraped target
// successfully. flags are added to the command line (e.g.
// --enable-feature=native-histograms). The server is killed when the test ends;
// if the test failed, its log is written to the test log. Start reports problems
// by its error, so it may run on any goroutine; ctx bounds the wait.
func Start(ctx context.Context, t testing.TB, bin, target string, flags ...string) (*Server, error) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "prometheus.yml")
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: cand
    static_configs:
      - targets: [%q]
`, target)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--config.file=" + cfgPath,
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr,
	}, flags...)
	cmd := exec.Command(bin, args...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("%s %v log:\n%s", bin, args, log.String())
		}
	})

	s := &Server{URL: "http://" + addr}
	what := "ready"
	for {
		if s.ready(ctx) {
			what = "scraping " + target
			up, state, err := s.scraped(ctx)
			if up {
				return s, nil
			}
			if err == nil {
				what += " (" + state + ")"
			}
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("%s %v exited before %s:\n%s", bin, args, what, log.String())
		case <-ctx.Done():
			return nil, fmt.Errorf("%s %v not %s: %w", bin, args, what, ctx.Err())
		case <-time.After(readyEvery):
		}
	}
}

// ready reports whether the server answers its readiness endpoint with 200.
func (s *Server) ready(ctx context.Context) bool {
	resp, err := s.get(ctx, "/-/ready")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// scraped reports whether the one scrape target's last scrape succeeded, and
// otherwise its health and last error.
func (s *Server) scraped(ctx context.Context) (bool, string, error) {
	resp, err := s.get(ctx, "/api/v1/targets?state=active")
	if err != nil {
		return false, "", err
	}
	defer resp.Body.Close()
	var reply struct {
		Data struct {
			ActiveTargets []struct {
				Health    string
				LastError string
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil {
		return false, "", err
	}
	if len(reply.Data.ActiveTargets) != 1 {
		return false, fmt.Sprintf("%d active targets", len(reply.Data.ActiveTargets)), nil
	}
	tg := reply.Data.ActiveTargets[0]
	return tg.Health == "up", fmt.Sprintf("health %s, last error %q", tg.Health, tg.LastError), nil
}

func (s *Server) get(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	if err != nil {
		return nil, err
	}
	return http.DefaultClient.Do(req)
}

func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
