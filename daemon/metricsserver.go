package daemon

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"cand/config"
	"cand/internal/basicauth"
	"cand/internal/connlimit"
	"cand/internal/webconfig"
)

// maxHeaderBytes bounds a request's header lines (net/http reads 4 KiB more before
// it answers 431); a scrape's headers, credentials included, take a few hundred
// bytes.
const maxHeaderBytes = 8 << 10

// metricsServer builds the server for /metrics from the metrics section, with its
// limits (docs/security.md), and reads and checks metrics.web_config; nil if the
// endpoint is off. Run calls it before touching any hardware, so that a bad web
// configuration stops cand at once.
func (w *wiring) metricsServer(m *config.Metrics) (*http.Server, error) {
	if w.opt.MetricsListener == nil && *m.Listen == "" {
		return nil, nil
	}
	var p http.Protocols
	p.SetHTTP1(true)
	srv := &http.Server{
		Handler:        w.Metrics.Handler(),
		ReadTimeout:    m.ReadTimeout.D(),
		WriteTimeout:   m.WriteTimeout.D(),
		IdleTimeout:    m.IdleTimeout.D(),
		MaxHeaderBytes: maxHeaderBytes,
		Protocols:      &p,
		// One request at a time on an HTTP/2 connection, as on an HTTP/1.1 one,
		// so max_connections bounds the requests served at once.
		HTTP2:    &http.HTTP2Config{MaxConcurrentStreams: 1},
		ErrorLog: slog.NewLogLogger(w.log.Handler(), slog.LevelDebug), // TLS handshake failures and the like
	}
	if m.WebConfig == "" {
		return srv, nil
	}
	s, err := loadWebConfig(m)
	if err != nil {
		return nil, err
	}
	for _, warning := range s.Warnings() {
		w.log.Warn("metrics.web_config: " + m.WebConfig + ": " + warning)
	}
	if srv.Handler, err = s.Handler(srv.Handler, basicauth.DefaultLimits(), w.log); err != nil {
		return nil, fmt.Errorf("metrics.web_config: %s: %w", m.WebConfig, err)
	}
	if s.TLS != nil {
		srv.TLSConfig = s.TLS
		p.SetHTTP2(s.HTTP2)
	}
	return srv, nil
}

func loadWebConfig(m *config.Metrics) (*webconfig.Settings, error) {
	s, err := webconfig.Load(m.WebConfig)
	if err != nil {
		return nil, fmt.Errorf("metrics.web_config: %w", err)
	}
	return s, nil
}

// checkWebConfig reads and checks metrics.web_config, if the endpoint is on.
func checkWebConfig(cfg *config.Config) error {
	if m := &cfg.Metrics; m.WebConfig != "" && *m.Listen != "" {
		_, err := loadWebConfig(m)
		return err
	}
	return nil
}

// serveMetrics serves srv (nil: none) on Options.MetricsListener or
// metrics.listen until Run returns, with at most metrics.max_connections
// connections open, and sets MetricsAddr.
func (w *wiring) serveMetrics(srv *http.Server) error {
	if srv == nil {
		return nil
	}
	l := w.opt.MetricsListener
	if l == nil {
		var err error
		if l, err = listenMetrics(*w.cfg.Metrics.Listen); err != nil {
			return err
		}
	}
	w.startMetrics(srv, l, w.cfg.Metrics.MaxConnections)
	w.cleanups = append(w.cleanups, func() {
		w.reloading.mu.Lock() // a reload may be replacing it
		defer w.reloading.mu.Unlock()
		w.closeMetrics()
	})
	return nil
}

func listenMetrics(listen string) (net.Listener, error) {
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("metrics: cannot listen on %s: %w (set metrics.listen to a free address, or \"\" to disable)", listen, err)
	}
	return l, nil
}

// startMetrics serves srv on l, at most maxConns connections at once, as the
// metrics endpoint (a reload replaces it).
func (w *wiring) startMetrics(srv *http.Server, l net.Listener, maxConns int) {
	w.MetricsAddr = l.Addr().String()
	lim := connlimit.New(l, maxConns)
	srv.ConnState = lim.ConnState
	go func() {
		var err error
		if srv.TLSConfig != nil {
			err = srv.ServeTLS(lim, "", "")
		} else {
			err = srv.Serve(lim)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			w.log.Error("metrics server", "err", err)
		}
	}()
	w.metricsSrv = srv
}

// closeMetrics closes the metrics endpoint, at exit or for a reload's new one.
func (w *wiring) closeMetrics() {
	if w.metricsSrv != nil {
		w.metricsSrv.Close()
		w.metricsSrv, w.MetricsAddr = nil, ""
	}
}
