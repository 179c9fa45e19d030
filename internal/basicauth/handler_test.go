package basicauth

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// fixture is a Handler for user "prom" with password "secret" whose clock the
// test moves and whose bcrypt comparisons it counts.
type fixture struct {
	*Handler
	t        *testing.T
	at       time.Time
	compares atomic.Int32
	served   atomic.Int32
}

func newFixture(t *testing.T, cost int) *fixture {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte("secret"), cost)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, at: time.Unix(1_000_000, 0)}
	h, err := New(map[string]string{"prom": string(hash)}, DefaultLimits(), slog.New(slog.NewTextHandler(io.Discard, nil)),
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) { f.served.Add(1) }))
	if err != nil {
		t.Fatal(err)
	}
	h.now = func() time.Time { return f.at }
	h.compare = func(hash, password []byte) error {
		f.compares.Add(1)
		return bcrypt.CompareHashAndPassword(hash, password)
	}
	f.Handler = h
	return f
}

// do sends a request from remote (host:port) with user and password (none if
// user is "") and returns the response.
func (f *fixture) do(remote, user, password string) *http.Response {
	r := httptest.NewRequest("GET", "/metrics", nil)
	r.RemoteAddr = remote
	if user != "" {
		r.SetBasicAuth(user, password)
	}
	w := httptest.NewRecorder()
	f.ServeHTTP(w, r)
	return w.Result()
}

func (f *fixture) expect(remote, user, password string, code int) *http.Response {
	f.t.Helper()
	resp := f.do(remote, user, password)
	if resp.StatusCode != code {
		f.t.Fatalf("%s as %q/%q: status %d, want %d", remote, user, password, resp.StatusCode, code)
	}
	return resp
}

func TestCredentials(t *testing.T) {
	f := newFixture(t, bcrypt.MinCost)
	const src = "192.0.2.1:4000"
	resp := f.expect(src, "", "", http.StatusUnauthorized)
	if got := resp.Header.Get("WWW-Authenticate"); got != `Basic realm="cand", charset="UTF-8"` {
		t.Errorf("WWW-Authenticate %q", got)
	}
	if f.compares.Load() != 0 {
		t.Errorf("%d comparisons without credentials, want 0", f.compares.Load())
	}
	f.expect(src, "prom", "wrong", http.StatusUnauthorized)
	f.expect(src, "nobody", "secret", http.StatusUnauthorized)
	if f.compares.Load() != 2 {
		t.Errorf("%d comparisons for a wrong password and an unknown user, want 2 (an unknown user is compared too, to take as long)", f.compares.Load())
	}
	f.expect(src, "prom", "secret", http.StatusOK)
	f.expect(src, "prom", "secret", http.StatusOK)
	if f.compares.Load() != 3 || f.served.Load() != 2 {
		t.Errorf("%d comparisons, %d served; want 3 (the good password once) and 2", f.compares.Load(), f.served.Load())
	}
}

// A guesser from one address gets PerSource.Burst comparisons, then 429 without
// one; a scraper whose password passed before is still served; the bucket refills.
func TestRateLimitPerSource(t *testing.T) {
	f := newFixture(t, bcrypt.MinCost)
	lim := DefaultLimits().PerSource
	f.expect("192.0.2.1:4000", "prom", "secret", http.StatusOK) // a scraper, from another address
	base := f.compares.Load()
	const guesser = "198.51.100.7:5000"
	for i := range 20 {
		want := http.StatusUnauthorized
		if i >= lim.Burst {
			want = http.StatusTooManyRequests
		}
		resp := f.expect(guesser, "prom", fmt.Sprintf("guess%d", i), want)
		if want == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "10" {
			t.Errorf("Retry-After %q, want 10 (s)", resp.Header.Get("Retry-After"))
		}
	}
	if n := f.compares.Load() - base; n != int32(lim.Burst) {
		t.Errorf("%d comparisons for 20 guesses, want %d", n, lim.Burst)
	}
	// The good password, known to be good, needs no bucket, from any address.
	f.expect("192.0.2.1:4000", "prom", "secret", http.StatusOK)
	f.expect(guesser, "prom", "secret", http.StatusOK)
	f.at = f.at.Add(lim.Every)
	f.expect(guesser, "prom", "guess", http.StatusUnauthorized)
	f.expect(guesser, "prom", "guess", http.StatusTooManyRequests)
	if n := f.compares.Load() - base; n != int32(lim.Burst)+1 {
		t.Errorf("%d comparisons after the refill, want %d", n, lim.Burst+1)
	}
}

// Guessers from many addresses share the total bucket.
func TestRateLimitTotal(t *testing.T) {
	f := newFixture(t, bcrypt.MinCost)
	lim := DefaultLimits().Total
	for i := range 50 {
		want := http.StatusUnauthorized
		if i >= lim.Burst {
			want = http.StatusTooManyRequests
		}
		f.expect(fmt.Sprintf("203.0.113.%d:80", i), "prom", "guess", want)
	}
	if n := f.compares.Load(); n != int32(lim.Burst) {
		t.Errorf("%d comparisons for 50 addresses, want %d", n, lim.Burst)
	}
	// Over a minute of guessing from new addresses, one comparison a second.
	for range 60 {
		f.at = f.at.Add(lim.Every)
		f.expect(fmt.Sprintf("203.0.113.%d:80", 100+f.compares.Load()), "prom", "guess", http.StatusUnauthorized)
		f.expect("203.0.113.250:80", "prom", "guess", http.StatusTooManyRequests)
	}
	if n := f.compares.Load(); n != int32(lim.Burst)+60 {
		t.Errorf("%d comparisons, want %d", n, lim.Burst+60)
	}
}

// The addresses of one IPv6 /64 share a bucket; an IPv4-mapped address is its IPv4.
func TestSource(t *testing.T) {
	for remote, want := range map[string]string{
		"192.0.2.1:80":                   "192.0.2.1",
		"[::ffff:192.0.2.1]:80":          "192.0.2.1",
		"[2001:db8:1:2:3:4:5:6]:80":      "2001:db8:1:2::",
		"[2001:db8:1:2:ffff::1%eth0]:80": "2001:db8:1:2::",
		"pipe":                           "invalid IP",
	} {
		if got := source(remote); got.String() != want {
			t.Errorf("source(%q) = %v, want %s", remote, got, want)
		}
	}
}

// However many addresses guess, at most maxSources buckets are kept.
func TestSourcesBounded(t *testing.T) {
	f := newFixture(t, bcrypt.MinCost)
	f.compare = func([]byte, []byte) error { return bcrypt.ErrMismatchedHashAndPassword }
	for i := range 3 * maxSources {
		f.at = f.at.Add(DefaultLimits().Total.Every)
		f.do(netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 80).String(), "prom", "guess")
		if len(f.sources) > maxSources {
			t.Fatalf("%d buckets after %d addresses", len(f.sources), i+1)
		}
	}
}

// Comparisons run one at a time.
func TestOneComparisonAtATime(t *testing.T) {
	f := newFixture(t, bcrypt.MinCost)
	var running, most atomic.Int32
	f.compare = func(hash, password []byte) error {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		return bcrypt.CompareHashAndPassword(hash, password)
	}
	var wg sync.WaitGroup
	for i := range DefaultLimits().Total.Burst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.do(fmt.Sprintf("203.0.113.%d:80", i), "prom", "guess")
		}()
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Errorf("%d comparisons at once, want 1", most.Load())
	}
}

// What a guess costs, with the cost-10 hashes htpasswd -nBC 10 makes: a checked
// guess is a bcrypt comparison; a guess over the limit is not.
func BenchmarkGuess(b *testing.B) {
	hash, err := bcrypt.GenerateFromPassword([]byte("secret"), 10)
	if err != nil {
		b.Fatal(err)
	}
	for _, limited := range []bool{false, true} {
		name := "checked"
		if limited {
			name = "limited"
		}
		b.Run(name, func(b *testing.B) {
			lim := Limits{PerSource: Rate{Burst: 1 << 30, Every: time.Nanosecond}, Total: Rate{Burst: 1 << 30, Every: time.Nanosecond}}
			if limited {
				lim = Limits{PerSource: Rate{Burst: 0, Every: time.Hour}, Total: Rate{Burst: 0, Every: time.Hour}}
			}
			h, err := New(map[string]string{"prom": string(hash)}, lim, slog.New(slog.NewTextHandler(io.Discard, nil)), http.NotFoundHandler())
			if err != nil {
				b.Fatal(err)
			}
			r := httptest.NewRequest("GET", "/metrics", nil)
			r.SetBasicAuth("prom", "guess")
			for b.Loop() {
				h.ServeHTTP(httptest.NewRecorder(), r)
			}
		})
	}
}
