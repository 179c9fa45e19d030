package daemon

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"cand/internal/basicauth"
	"cand/internal/testcert"
)

// The user the web configurations of these tests have.
const metricsUser, metricsPassword = "prom", "secret"

// secureEndpoint is a daemon whose metrics endpoint serves TLS with a
// self-signed certificate and basic authentication for metricsUser.
type secureEndpoint struct {
	r    *rig
	url  string // https://127.0.0.1:port/metrics
	cert testcert.Cert
}

// writeWebConfig writes a web configuration with TLS (a new certificate) and
// metricsUser, and returns its path and the certificate.
func writeWebConfig(t *testing.T) (string, testcert.Cert) {
	t.Helper()
	dir := t.TempDir()
	cert := testcert.Write(t, dir, "cand")
	hash, err := bcrypt.GenerateFromPassword([]byte(metricsPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "web.yml")
	web := fmt.Sprintf("tls_server_config:\n  cert_file: cand.crt\n  key_file: cand.key\nbasic_auth_users:\n  %s: %s\n", metricsUser, hash)
	if err := os.WriteFile(path, []byte(web), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, cert
}

// startSecure starts the daemon of c with a web configuration from writeWebConfig.
func startSecure(t *testing.T, c *rigConfig) *secureEndpoint {
	t.Helper()
	path, cert := writeWebConfig(t)
	r := c.metricsKey("web_config", strconv.Quote(path)).start()
	return &secureEndpoint{r: r, url: "https://" + r.d.MetricsAddr + "/metrics", cert: cert}
}

// client trusts the endpoint's certificate only, with a connection pool of its own.
func (e *secureEndpoint) client() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: e.cert.ClientConfig()}}
}

// get scrapes with user and password (none if user is "") and returns the status
// and body.
func (e *secureEndpoint) get(c *http.Client, user, password string) (int, string, http.Header, error) {
	req, err := http.NewRequest("GET", e.url, nil)
	if err != nil {
		return 0, "", nil, err
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header, err
}

// Over TLS, trusted through a pool that holds only the self-signed certificate:
// the right password scrapes, a wrong or missing one is refused; a client that
// does not trust the certificate, or speaks plain HTTP, gets nothing.
func TestMetricsTLSBasicAuth(t *testing.T) {
	e := startSecure(t, newRigConfig(t).peer(periodicPeer("p", 5*time.Millisecond, 8, 0x100)))
	if _, _, err := e.r.read(0, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	c := e.client()
	code, body, _, err := e.get(c, metricsUser, metricsPassword)
	if err != nil || code != http.StatusOK || !strings.Contains(body, "\ncand_rx_frames_total{controller=\"sim0\",interface=\"vcan0\"} ") {
		t.Fatalf("scrape: %d %v\n%.300s", code, err, body)
	}
	for _, tc := range []struct{ what, user, password string }{
		{"wrong password", metricsUser, "wrong"},
		{"no password", "", ""},
		{"unknown user", "nobody", metricsPassword},
	} {
		code, body, hdr, err := e.get(c, tc.user, tc.password)
		if err != nil || code != http.StatusUnauthorized || strings.Contains(body, "cand_") || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("%s: %d %v, WWW-Authenticate %q, body %.100q; want 401 asking for basic authentication", tc.what, code, err, hdr.Get("WWW-Authenticate"), body)
		}
	}
	untrusting := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}}}
	var unknownAuthority x509.UnknownAuthorityError
	if _, _, _, err := e.get(untrusting, metricsUser, metricsPassword); !errors.As(err, &unknownAuthority) {
		t.Errorf("client without the certificate: %v, want an unknown-authority error", err)
	}
	resp, err := http.Get("http://" + e.r.d.MetricsAddr + "/metrics")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP to the TLS endpoint: %s, want 400", resp.Status)
		}
	}
}

// A guesser gets the per-address burst of password checks, then 429 without a
// check; the scraper whose password passed before keeps scraping meanwhile.
func TestMetricsAuthRateLimit(t *testing.T) {
	e := startSecure(t, newRigConfig(t))
	scraper, guesser := e.client(), e.client()
	if code, _, _, err := e.get(scraper, metricsUser, metricsPassword); err != nil || code != http.StatusOK {
		t.Fatalf("scrape: %d %v", code, err)
	}
	lim := basicauth.DefaultLimits().PerSource
	start := time.Now()
	var checked, limited int
	for i := range 20 {
		code, _, hdr, err := e.get(guesser, metricsUser, fmt.Sprintf("guess%d", i))
		switch {
		case err != nil:
			t.Fatal(err)
		case code == http.StatusUnauthorized:
			if limited > 0 && time.Since(start) < lim.Every {
				t.Errorf("guess %d checked after %d were refused", i, limited)
			}
			checked++
		case code == http.StatusTooManyRequests:
			if s, err := strconv.Atoi(hdr.Get("Retry-After")); err != nil || s < 1 || s > 10 {
				t.Errorf("Retry-After %q, want 1..10 s", hdr.Get("Retry-After"))
			}
			limited++
		default:
			t.Fatalf("guess %d: status %d", i, code)
		}
	}
	// Both clients are 127.0.0.1, whose bucket gave one check to the scraper; it
	// refills one every lim.Every (on a slow run, one more).
	if least, most := lim.Burst-1, lim.Burst-1+int(time.Since(start)/lim.Every); checked < least || checked > most {
		t.Errorf("%d of 20 guesses checked, want %d..%d", checked, least, most)
	}
	if code, _, _, err := e.get(scraper, metricsUser, metricsPassword); err != nil || code != http.StatusOK {
		t.Errorf("scrape while the guesser is refused: %d %v, want 200", code, err)
	}
}

// A web configuration that cannot be used stops cand before it touches the
// hardware, with the file and the problem named; -check-config says the same.
func TestMetricsWebConfigRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(path, []byte("basic_auth_users:\n  prom: secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := newRigConfig(t).metricsKey("web_config", strconv.Quote(path)).build()
	want := "metrics.web_config: " + path + `: basic_auth_users: "prom": not a bcrypt hash (crypto/bcrypt: hashedSecret too short to be a bcrypted password); make one with htpasswd -nBC 10 "" | tr -d ':\n'`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := Run(ctx, cfg, Options{Version: "test"}); err == nil || err.Error() != want {
		t.Errorf("Run: %v\nwant %s", err, want)
	}
	if _, err := CheckConfig(cfg); err == nil || err.Error() != want {
		t.Errorf("CheckConfig: %v\nwant %s", err, want)
	}
}
