package webconfig

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"cand/internal/basicauth"
	"cand/internal/testcert"
)

// write stores a web configuration in dir and returns its path.
func write(t *testing.T, dir, content string) string {
	t.Helper()
	p := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func hash(t *testing.T, password string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

func handler(t *testing.T, s *Settings) http.Handler {
	t.Helper()
	h, err := s.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "metrics") }),
		basicauth.DefaultLimits(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func status(h http.Handler, user, password string) (int, http.Header) {
	r := httptest.NewRequest("GET", "/metrics", nil)
	if user != "" {
		r.SetBasicAuth(user, password)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Header()
}

// An empty file is plain HTTP without authentication, as for the toolkit.
func TestEmpty(t *testing.T) {
	s, err := Load(write(t, t.TempDir(), ""))
	if err != nil {
		t.Fatal(err)
	}
	if s.TLS != nil || !s.HTTP2 || s.Warnings() != nil {
		t.Errorf("got TLS %v, HTTP2 %v, warnings %q; want plain HTTP", s.TLS, s.HTTP2, s.Warnings())
	}
	if code, _ := status(handler(t, s), "", ""); code != http.StatusOK {
		t.Errorf("status %d without credentials, want 200", code)
	}
}

// TLS with relative file names (relative to the file's directory), a user, and
// the headers and HTTP/2 setting of http_server_config.
func TestTLSAndUsers(t *testing.T) {
	dir := t.TempDir()
	testcert.Write(t, dir, "server")
	s, err := Load(write(t, dir, `tls_server_config:
  cert_file: server.crt
  key_file: server.key
  min_version: TLS13
http_server_config:
  http2: false
  headers:
    X-Frame-Options: deny
basic_auth_users:
  prom: `+hash(t, "secret")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.TLS == nil || s.TLS.MinVersion != tls.VersionTLS13 || s.HTTP2 || s.Warnings() != nil {
		t.Fatalf("got TLS %+v, HTTP2 %v, warnings %q", s.TLS, s.HTTP2, s.Warnings())
	}
	if c, err := s.TLS.GetCertificate(&tls.ClientHelloInfo{}); err != nil || c == nil {
		t.Errorf("certificate: %v", err)
	}
	h := handler(t, s)
	for _, tc := range []struct {
		user, password string
		want           int
	}{{"", "", 401}, {"prom", "wrong", 401}, {"prom", "secret", 200}} {
		code, hdr := status(h, tc.user, tc.password)
		if code != tc.want || hdr.Get("X-Frame-Options") != "deny" {
			t.Errorf("%q/%q: status %d, X-Frame-Options %q; want %d, deny", tc.user, tc.password, code, hdr.Get("X-Frame-Options"), tc.want)
		}
	}
}

// Passwords without TLS load, with a warning.
func TestUsersWithoutTLS(t *testing.T) {
	s, err := Load(write(t, t.TempDir(), "basic_auth_users:\n  prom: "+hash(t, "secret")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Warnings(); len(w) != 1 || !strings.Contains(w[0], "in the clear") {
		t.Errorf("warnings %q", w)
	}
}

// The file's rate_limit refuses requests beyond it, as the toolkit does.
func TestRateLimit(t *testing.T) {
	s, err := Load(write(t, t.TempDir(), "rate_limit:\n  interval: 1h\n  burst: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := handler(t, s)
	for i, want := range []int{200, 200, 429} {
		if code, _ := status(h, "", ""); code != want {
			t.Errorf("request %d: status %d, want %d", i, code, want)
		}
	}
}

// Each problem is named with the file.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	testcert.Write(t, dir, "server")
	for _, tc := range []struct{ name, content, want string }{
		{"unknown key", "basic_auth_user:\n  prom: x\n", "web.yml: yaml: unmarshal errors:\n  line 1: field basic_auth_user not found in type web.Config"},
		{"not a hash", "basic_auth_users:\n  prom: secret\n", `web.yml: basic_auth_users: "prom": not a bcrypt hash (crypto/bcrypt: hashedSecret too short to be a bcrypted password); make one with htpasswd -nBC 10 "" | tr -d ':\n'`},
		{"key missing", "tls_server_config:\n  cert_file: server.crt\n", "web.yml: tls_server_config: missing one of key or key_file"},
		{"cert missing", "tls_server_config:\n  cert_file: none.crt\n  key_file: server.key\n", "web.yml: tls_server_config: failed to read cert_file (" + filepath.Join(dir, "none.crt") + "): open " + filepath.Join(dir, "none.crt") + ": no such file or directory"},
		{"header", "http_server_config:\n  headers:\n    Server: cand\n", `web.yml: HTTP header "Server" can not be configured`},
		{"rate limit", "rate_limit:\n  interval: 1s\n", "web.yml: rate_limit: interval 1s with burst 0 would refuse every request; give an interval above 0 and a burst of at least 1, or leave rate_limit out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, dir, tc.content)
			_, err := Load(p)
			if err == nil || err.Error() != filepath.Join(dir, tc.want) {
				t.Errorf("got %v\nwant %s", err, filepath.Join(dir, tc.want))
			}
		})
	}
	_, err := Load(filepath.Join(dir, "absent.yml"))
	if want := filepath.Join(dir, "absent.yml") + ": cannot read: no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
