package daemon

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.einride.tech/can"
	"golang.org/x/crypto/bcrypt"

	"cand/bridge"
	"cand/config"
	"cand/internal/waitfor"
	"cand/socketcan"
)

// reloadable writes the configuration to a file the daemon is told it was read
// from (Options.ConfigPath), for r.reload to rewrite.
func (c *rigConfig) reloadable() *rigConfig {
	c.opts.configPath = filepath.Join(c.t.TempDir(), "cand.yaml")
	c.writeTo(c.opts.configPath)
	return c
}

func (c *rigConfig) writeTo(path string) {
	c.t.Helper()
	if err := os.WriteFile(path, []byte(c.yaml()), 0o644); err != nil {
		c.t.Fatal(err)
	}
}

// reload writes next's configuration to the daemon's file and asks the daemon,
// through its API, to read it again.
func (r *rig) reload(path string, next *rigConfig) ReloadResult {
	r.t.Helper()
	next.build() // a configuration config.Parse refuses fails the test here
	next.writeTo(path)
	res, err := r.d.Reload()
	if err != nil {
		r.t.Fatalf("reload: %v", err)
	}
	return res
}

// nextData reads controller 0 until a data frame arrives (error frames are
// skipped) and returns it.
func (r *rig) nextData(d time.Duration) can.Frame {
	r.t.Helper()
	deadline := time.Now().Add(d)
	for {
		f, k, err := r.read(0, time.Until(deadline))
		if err != nil {
			r.t.Fatalf("no data frame within %v: %v", d, err)
		}
		if k == socketcan.FrameData {
			return f
		}
	}
}

// filterConfig accepts only standard ID id: both masks exact, one filter.
func filterConfig(t *testing.T, id uint32) *rigConfig {
	return newRigConfig(t).peer(periodicPeer("p", 2*time.Millisecond, 1, 0x100, 0x200)).
		filters(filter(0x7FF), filter(0x7FF), filter(id))
}

// A reload reprograms the acceptance filters: frames of the ID the new filter
// accepts pass, the other ID's no longer do; no frame that reached the chip is
// lost on the way (checkConservation).
func TestReloadFilters(t *testing.T) {
	rc := filterConfig(t, 0x100).reloadable()
	r := rc.start()
	for range 20 {
		if f := r.nextData(5 * time.Second); f.ID != 0x100 {
			t.Fatalf("filter 0x100: got ID %#x", f.ID)
		}
	}
	res := r.reload(rc.opts.configPath, filterConfig(t, 0x200))
	if want := []string{"controllers[0].filters"}; !slices.Equal(res.Applied, want) || len(res.NeedRestart) != 0 {
		t.Fatalf("reload: %+v, want applied %q and nothing needing a restart", res, want)
	}
	// Frames the old filter accepted were read out of the chip before it was
	// reprogrammed: they come first.
	for f := r.nextData(5 * time.Second); f.ID != 0x200; f = r.nextData(5 * time.Second) {
		if f.ID != 0x100 {
			t.Fatalf("got ID %#x", f.ID)
		}
	}
	for range 20 {
		if f := r.nextData(5 * time.Second); f.ID != 0x200 {
			t.Fatalf("filter 0x200 in place: got ID %#x", f.ID)
		}
	}
	r.checkConservation()
}

// error_frames, restart_ms and tx_timeout change on the owner thread, without a
// restart of the controller; error_frames: false then keeps the error states off
// the socket, as TestErrorFramesOff does from the start.
func TestReloadSettings(t *testing.T) {
	rc := newRigConfig(t).reloadable()
	r := rc.start()
	res := r.reload(rc.opts.configPath, newRigConfig(t).errorFramesOff().restartMs(0).txTimeout(250*time.Millisecond))
	want := []string{"controllers[0].error_frames", "controllers[0].restart_ms", "controllers[0].tx_timeout"}
	if !slices.Equal(res.Applied, want) || len(res.NeedRestart) != 0 {
		t.Fatalf("reload: %+v, want applied %q", res, want)
	}
	var got bridge.Settings
	if !r.d.Owner.Apply(func() { got = r.d.Owner.Ports[0].Settings() }) {
		t.Fatal("owner thread not running")
	}
	if want := (bridge.Settings{ErrorFrames: false, RestartNs: 0, TxTimeoutNs: int64(250 * time.Millisecond), PollWindow: config.DefaultIntPollWindow.D()}); got != want {
		t.Fatalf("port settings %+v, want %+v", got, want)
	}
	if c := r.d.Owner.Ports[0].M; c.Restarts.Load() != 0 || c.ChipResets.Load() != 0 {
		t.Fatal("the controller was restarted for settings alone")
	}
	// Nobody ACKs: error-passive, silently.
	r.write(0, can.Frame{ID: 0x123, Length: 1, Data: can.Data{1}})
	m := r.d.Owner.Ports[0].M
	waitfor.Cond(t, 5*time.Second, "error-passive", func() bool { return m.BusState.Load() == 2 })
	if f, k, err := r.read(0, 100*time.Millisecond); err == nil {
		t.Fatalf("error_frames reloaded to false, but cand wrote a %v frame %v", k, f)
	}
}

// A new bitrate restarts the controller with it. The virtual bus stays at
// 500 kbit/s, so at 250 kbit/s the chip sees only errors (as a real one would),
// and back at 500 kbit/s frames pass again; the gauges and the status follow.
func TestReloadBitrateRestartsTheController(t *testing.T) {
	peer := periodicPeer("p", 2*time.Millisecond, 1, 0x100)
	sock := filepath.Join(statusDir(t), "status.sock")
	conf := func() *rigConfig { return newRigConfig(t).statusSocket(sock, "").peer(peer) }
	rc := conf().reloadable()
	r := rc.start()
	r.nextData(5 * time.Second)
	res := r.reload(rc.opts.configPath, conf().bitrate(250_000))
	if want := []string{"controllers[0].bitrate"}; !slices.Equal(res.Applied, want) {
		t.Fatalf("reload: %+v, want applied %q", res, want)
	}
	m := r.d.Owner.Ports[0].M
	if m.Bitrate.Load() != 250_000 {
		t.Fatalf("cand_bitrate %d after the reload, want 250000", m.Bitrate.Load())
	}
	if st := fetchStatus(t, sock); st.Controllers[0].BitTiming.Bitrate != 250_000 || st.Controllers[0].BitTiming.BRP != 2 {
		t.Fatalf("status bit timing %+v, want 250000 bit/s, brp 2", st.Controllers[0].BitTiming)
	}
	// Frames read out before the restart may still come; then only errors.
	waitfor.Cond(t, 5*time.Second, "receive errors at the wrong bitrate", func() bool { return m.REC.Load() > 0 })
	r.reload(rc.opts.configPath, conf())
	before := m.RXFrames.Load()
	waitfor.Cond(t, 5*time.Second, "frames at 500 kbit/s again", func() bool { return m.RXFrames.Load() > before+10 })
	if m.Bitrate.Load() != 500_000 || m.REC.Load() > 8 {
		t.Fatalf("cand_bitrate %d, REC %d after going back to 500 kbit/s", m.Bitrate.Load(), m.REC.Load())
	}
}

// What needs a restart of cand is left as it is and listed; what can change in
// the same file still does. An invalid file changes nothing.
func TestReloadNeedsRestartAndInvalid(t *testing.T) {
	rc := newRigConfig(t).reloadable()
	r := rc.start()
	next := newRigConfig(t).chipSelect("ce1", false).intGPIO(24).txTimeout(2 * time.Second)
	next.controller("extra", "vcan1").chipSelect("gpio5", false).intGPIO(23)
	res := r.reload(rc.opts.configPath, next)
	if want := []string{"controllers[0].tx_timeout"}; !slices.Equal(res.Applied, want) {
		t.Errorf("applied %q, want %q", res.Applied, want)
	}
	if want := []string{"controllers[0].spi", "controllers[0].int_gpio", "controllers[1] (extra, added)"}; !slices.Equal(res.NeedRestart, want) {
		t.Errorf("need restart %q, want %q", res.NeedRestart, want)
	}
	if err := os.WriteFile(rc.opts.configPath, []byte("controllers:\n  - bitrate: 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.d.Reload(); err == nil || !strings.Contains(err.Error(), "controllers[0].bitrate") {
		t.Fatalf("reload of an invalid file: %v, want the bitrate's error", err)
	}
	// The running configuration is the first reload's: the same file again
	// changes nothing more.
	next.writeTo(rc.opts.configPath)
	res, err := r.d.Reload()
	if err != nil || len(res.Applied) != 0 {
		t.Fatalf("second reload of the same file: %+v, %v; want nothing applied", res, err)
	}
}

// The metrics section is served anew: basic authentication added by a reload
// (metrics.web_config) makes /metrics ask for credentials.
func TestReloadMetrics(t *testing.T) {
	dir := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte(metricsPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	web := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(web, []byte(fmt.Sprintf("basic_auth_users:\n  %s: %s\n", metricsUser, hash)), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0") // a free port for metrics.listen
	if err != nil {
		t.Fatal(err)
	}
	listen := l.Addr().String()
	l.Close()
	conf := func() *rigConfig { return newRigConfig(t).metricsKey("listen", listen) }
	path := filepath.Join(dir, "cand.yaml")
	conf().writeTo(path)
	r := startOnNetdevs(t, conf().build(), newFakeNetdevs(t), func(o *Options) { o.ConfigPath = path })
	get := func(addr, user string) int {
		req, _ := http.NewRequest("GET", "http://"+addr+"/metrics", nil)
		if user != "" {
			req.SetBasicAuth(user, metricsPassword)
		}
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	old := r.d.MetricsAddr
	if code := get(old, ""); code != http.StatusOK {
		t.Fatalf("before the reload: %d, want 200", code)
	}
	res := r.reload(path, conf().metricsKey("web_config", strconv.Quote(web)))
	if !slices.Equal(res.Applied, []string{"metrics"}) {
		t.Fatalf("reload: %+v, want metrics applied", res)
	}
	if addr := r.d.MetricsAddr; addr != old {
		t.Errorf("served on %s after the reload, want %s again", addr, old)
	}
	if code := get(old, ""); code != http.StatusUnauthorized {
		t.Errorf("after the reload, no credentials: %d, want 401", code)
	}
	if code := get(old, metricsUser); code != http.StatusOK {
		t.Errorf("after the reload, with credentials: %d, want 200", code)
	}
}
