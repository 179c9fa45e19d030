package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry is cand's set of metrics: build information, the Go runtime and
// process collectors, and one collector per controller.
type Registry struct {
	reg *prometheus.Registry
}

// New returns a registry with cand_build_info{version, goversion} = 1 and the Go
// and process collectors.
func New(version string) *Registry {
	reg := prometheus.NewRegistry()
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "cand_build_info",
		Help:        "Build information of the running cand; always 1.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": runtime.Version()},
	})
	info.Set(1)
	reg.MustRegister(
		info,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return &Registry{reg: reg}
}

// AddController creates the metrics of one controller, labelled
// controller=name, interface=iface, and registers them. Call it at start-up,
// before the frame path runs. It panics if a controller with the same name and
// interface was added before: that is a configuration bug the config validation
// must reject.
func (r *Registry) AddController(name, iface string) *Controller {
	c := newController(name, iface, time.Now())
	if err := r.reg.Register(newCollector(c)); err != nil {
		panic(fmt.Sprintf("metrics: controller %q on interface %q added twice (%v); give every controller a unique name", name, iface, err))
	}
	return c
}

// Gatherer returns the underlying registry, for tests and other exporters.
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }

// Handler serves /metrics (text, OpenMetrics or protobuf, as the scraper asks), one
// scrape at a time (oneAtATime), and a small index page at /.
func (r *Registry) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", newOneAtATime(promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		ErrorHandling:     promhttp.ContinueOnError,
	})))
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, indexPage)
	})
	return mux
}

const indexPage = `<!DOCTYPE html>
<html><head><title>cand</title></head>
<body><h1>cand</h1><p>MCP2515 to SocketCAN bridge. Metrics: <a href="/metrics">/metrics</a></p></body>
</html>
`

// Serve listens on addr (host:port) and serves Handler until ctx is done, then
// shuts the server down and returns nil. It returns an error at once if addr
// cannot be listened on.
func (r *Registry) Serve(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics: listen on %q: %w; set metrics.listen to a free host:port, or to \"\" to disable the endpoint", addr, err)
	}
	return r.ServeListener(ctx, ln)
}

// ServeListener is Serve on an existing listener, which it closes.
func (r *Registry) ServeListener(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           r.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      30 * time.Second,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("metrics: serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		// Scrapes still running after 5 s: cut them off.
		srv.Close()
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics: serve on %s: %w", ln.Addr(), err)
	}
	return nil
}
