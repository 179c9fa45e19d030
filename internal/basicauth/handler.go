// Package basicauth checks HTTP basic authentication against bcrypt hashes (the
// basic_auth_users of the Prometheus exporters' web configuration) and bounds the
// CPU time a password guesser can make it spend.
//
// A bcrypt comparison is meant to be slow: at cost 10 it takes tens of
// milliseconds of CPU on a fast core and several times that on a Raspberry Pi.
// So a comparison runs only for credentials not yet known to be good, and only
// while token buckets allow it, one per client address and one for all clients
// together; beyond them the answer is 429 Too Many Requests, at once, without a
// comparison. Comparisons run one at a time, so guessers never have more than one
// CPU, and credentials that passed are remembered (as a SHA-256 digest), so a
// scraper with the right password pays for one comparison and then never waits
// for a bucket, even while a guesser has emptied them.
package basicauth

import (
	"crypto/rand"
	"crypto/sha256"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/time/rate"
)

// Rate is a token bucket: Burst password checks at once, then one every Every.
type Rate struct {
	Burst int
	Every time.Duration
}

// Limits bound the bcrypt comparisons for credentials not yet known to be good.
type Limits struct {
	PerSource Rate // per client address (IPv6: per /64, what one host usually has)
	Total     Rate // all clients together
}

// DefaultLimits: a client address gets 3 checks at once, then one every 10 s;
// all together get 5 at once, then one a second. Sustained guessing thus costs
// one comparison's CPU time a second: a tenth of a core for comparisons of 100 ms.
func DefaultLimits() Limits {
	return Limits{PerSource: Rate{Burst: 3, Every: 10 * time.Second}, Total: Rate{Burst: 5, Every: time.Second}}
}

const (
	// maxSources bounds the per-address buckets kept. Buckets that have refilled
	// are dropped first (they are the same as new ones); when all are in use, a
	// new address is refused until some refill.
	maxSources = 1024
	// maxGood bounds the remembered good credentials. Only credentials that
	// passed a comparison are remembered, so a guesser cannot evict them.
	maxGood = 64
)

// Handler serves next to requests with good credentials.
type Handler struct {
	next   http.Handler
	users  map[string][]byte // user → bcrypt hash
	absent []byte            // compared for an unknown user, so that it takes as long
	limits Limits
	log    *slog.Logger

	mu      sync.Mutex
	good    map[[sha256.Size]byte]struct{}
	total   *rate.Limiter
	sources map[netip.Addr]*rate.Limiter

	bcryptMu sync.Mutex // one comparison at a time

	// Test hooks.
	now     func() time.Time
	compare func(hash, password []byte) error
}

var _ http.Handler = (*Handler)(nil)

// New checks requests against users (user → bcrypt hash, each already checked
// with bcrypt.Cost) before next. It hashes one random password at the highest
// cost among users, compared for unknown users.
func New(users map[string]string, limits Limits, log *slog.Logger, next http.Handler) (*Handler, error) {
	h := &Handler{next: next, users: map[string][]byte{}, limits: limits, log: log,
		good: map[[sha256.Size]byte]struct{}{}, sources: map[netip.Addr]*rate.Limiter{},
		total: newLimiter(limits.Total), now: time.Now, compare: bcrypt.CompareHashAndPassword}
	cost := bcrypt.MinCost
	for u, hash := range users {
		h.users[u] = []byte(hash)
		c, err := bcrypt.Cost([]byte(hash))
		if err != nil {
			return nil, err
		}
		cost = max(cost, c)
	}
	var err error
	h.absent, err = bcrypt.GenerateFromPassword([]byte(rand.Text()), cost)
	return h, err
}

func newLimiter(r Rate) *rate.Limiter { return rate.NewLimiter(rate.Every(r.Every), r.Burst) }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user, pass, ok := r.BasicAuth()
	if !ok {
		unauthorized(w)
		return
	}
	key := sha256.Sum256([]byte(user + ":" + pass)) // a user name has no ':' in basic authentication
	if h.known(key) {
		h.next.ServeHTTP(w, r)
		return
	}
	if wait, ok := h.take(source(r.RemoteAddr)); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
		return
	}
	hash, exists := h.users[user]
	if !exists {
		hash = h.absent
	}
	h.bcryptMu.Lock()
	err := h.compare(hash, []byte(pass))
	h.bcryptMu.Unlock()
	if !exists || err != nil {
		h.log.Warn("metrics: basic authentication failed", "user", user, "source", r.RemoteAddr)
		unauthorized(w)
		return
	}
	h.remember(key)
	h.next.ServeHTTP(w, r)
}

func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Basic realm="cand", charset="UTF-8"`)
	http.Error(w, http.StatusText(http.StatusUnauthorized), http.StatusUnauthorized)
}

func (h *Handler) known(key [sha256.Size]byte) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.good[key]
	return ok
}

func (h *Handler) remember(key [sha256.Size]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.good) >= maxGood {
		for k := range h.good {
			delete(h.good, k)
			break
		}
	}
	h.good[key] = struct{}{}
}

// take takes a token from src's bucket and from the total one, or, if either is
// empty, none and says how long until both have one.
func (h *Handler) take(src netip.Addr) (time.Duration, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	l := h.sources[src]
	if l == nil {
		if len(h.sources) >= maxSources {
			for a, sl := range h.sources {
				if sl.TokensAt(now) >= float64(sl.Burst()) {
					delete(h.sources, a)
				}
			}
		}
		if len(h.sources) >= maxSources {
			return h.limits.PerSource.Every, false
		}
		l = newLimiter(h.limits.PerSource)
	}
	wait := max(deficit(l, now), deficit(h.total, now))
	if wait > 0 {
		return wait, false
	}
	h.sources[src] = l
	l.AllowN(now, 1)
	h.total.AllowN(now, 1)
	return 0, true
}

// deficit is how long until l has a whole token (0: it has one).
func deficit(l *rate.Limiter, now time.Time) time.Duration {
	missing := 1 - l.TokensAt(now)
	if missing <= 0 {
		return 0
	}
	return time.Duration(missing / float64(l.Limit()) * float64(time.Second))
}

// source is the bucket's key for a request's RemoteAddr: the IPv4 address, or the
// IPv6 /64. An address that does not parse shares the zero key.
func source(remote string) netip.Addr {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return netip.Addr{}
	}
	a := ap.Addr().Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}
