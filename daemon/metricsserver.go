package daemon

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// serveMetrics serves /metrics on Options.MetricsListener or metrics.listen (none
// if that is empty) until Run returns, and sets MetricsAddr.
func (w *wiring) serveMetrics() error {
	l := w.opt.MetricsListener
	if l == nil {
		listen := w.cfg.Metrics.Listen
		if listen == nil || *listen == "" {
			return nil
		}
		var err error
		l, err = net.Listen("tcp", *listen)
		if err != nil {
			return fmt.Errorf("metrics: cannot listen on %s: %w (set metrics.listen to a free address, or \"\" to disable)", *listen, err)
		}
	}
	w.MetricsAddr = l.Addr().String()
	srv := &http.Server{Handler: w.Metrics.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			w.log.Error("metrics server", "err", err)
		}
	}()
	w.cleanups = append(w.cleanups, func() { srv.Close() })
	return nil
}
