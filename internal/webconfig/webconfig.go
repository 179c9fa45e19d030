// Package webconfig reads a Prometheus exporters' web configuration file, the
// format of node_exporter's --web.config.file (tls_server_config,
// http_server_config, rate_limit, basic_auth_users), with the types and checks of
// github.com/prometheus/exporter-toolkit's web package, into what cand's metrics
// server needs: a TLS configuration, and a handler for the headers, the request
// rate limit and basic authentication.
//
// The toolkit's own server (web.Serve) is not used: its handler runs a bcrypt
// comparison for every request with credentials it has not seen before, before
// anything could be put in front of it, and it remembers failed credentials with
// the good ones in one small cache, where a guesser's failures evict a scraper's
// success. Basic authentication here is package basicauth's, which compares only
// within rate limits. Two other differences: the file is read once, at start
// (the toolkit reads it for every request), so a change of users needs a
// restart; certificate and key files are still read at every TLS handshake, so a
// renewed certificate is used at once.
package webconfig

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"

	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v2"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/time/rate"

	"cand/internal/basicauth"
)

// HashHint says how to make a bcrypt hash for basic_auth_users.
const HashHint = `htpasswd -nBC 10 "" | tr -d ':\n'`

// Settings is a loaded web configuration.
type Settings struct {
	// TLS is the server's TLS configuration; nil serves plain HTTP.
	TLS *tls.Config
	// HTTP2 is whether HTTP/2 may be negotiated over TLS (http_server_config.http2,
	// default true).
	HTTP2 bool

	users     map[string]string
	headers   map[string]string
	rateLimit web.RateLimiterConfig
}

// Load reads and checks the file at path. Relative file names in it are relative
// to its directory. Every error starts with path.
func Load(path string) (*Settings, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: cannot read: %w", path, err)
	}
	// The toolkit's defaults for what the file leaves out.
	c := web.Config{
		TLSConfig:  web.TLSConfig{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13},
		HTTPConfig: web.HTTPConfig{HTTP2: true},
	}
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.TLSConfig.SetDirectory(filepath.Dir(path))
	s := &Settings{HTTP2: c.HTTPConfig.HTTP2, users: map[string]string{}, headers: c.HTTPConfig.Header, rateLimit: c.RateLimiterConfig}
	names := make([]string, 0, len(c.Users))
	for u := range c.Users {
		names = append(names, u)
	}
	sort.Strings(names)
	for _, u := range names {
		hash := string(c.Users[u])
		if _, err := bcrypt.Cost([]byte(hash)); err != nil {
			return nil, fmt.Errorf("%s: basic_auth_users: %q: not a bcrypt hash (%v); make one with %s", path, u, err, HashHint)
		}
		s.users[u] = hash
	}
	if r := c.RateLimiterConfig; r.Interval < 0 || r.Interval > 0 && r.Burst < 1 {
		return nil, fmt.Errorf("%s: rate_limit: interval %s with burst %d would refuse every request; give an interval above 0 and a burst of at least 1, or leave rate_limit out", path, r.Interval, r.Burst)
	}
	if c.TLSConfig.IsEnabled() {
		if s.TLS, err = web.ConfigToTLSConfig(&c.TLSConfig); err != nil {
			return nil, fmt.Errorf("%s: tls_server_config: %w", path, err)
		}
	}
	// What the toolkit checks beyond the above (allowed headers, among others).
	if err := web.Validate(path); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Warnings are findings that do not stop cand.
func (s *Settings) Warnings() []string {
	if len(s.users) > 0 && s.TLS == nil {
		return []string{"basic_auth_users without tls_server_config: passwords cross the network in the clear"}
	}
	return nil
}

// Handler wraps next in the file's request rate limit (429 beyond it, as the
// toolkit does), its response headers and its basic authentication, which uses
// limits for the bcrypt comparisons.
func (s *Settings) Handler(next http.Handler, limits basicauth.Limits, log *slog.Logger) (http.Handler, error) {
	h := next
	if len(s.users) > 0 {
		a, err := basicauth.New(s.users, limits, log, h)
		if err != nil {
			return nil, err
		}
		h = a
	}
	if len(s.headers) > 0 {
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for k, v := range s.headers {
				w.Header().Set(k, v)
			}
			inner.ServeHTTP(w, r)
		})
	}
	if r := s.rateLimit; r.Interval > 0 {
		lim := rate.NewLimiter(rate.Every(r.Interval), r.Burst)
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if !lim.Allow() {
				http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
				return
			}
			inner.ServeHTTP(w, req)
		})
	}
	return h, nil
}
