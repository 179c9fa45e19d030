package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/config"
	"cand/internal/inproc"
	"cand/socketcan"
)

// fakeNetdevs stands in for the kernel's interfaces as socketcan.Ensure,
// TakeDown and DeleteLink treat them: a link exists or not, and is up or down.
// Open gives the daemon one end of a SOCK_SEQPACKET socketpair and keeps the
// other for the test, as the application on the interface.
type fakeNetdevs struct {
	t       *testing.T
	mu      sync.Mutex
	links   map[string]*fakeLink // by the name cand opens
	calls   []string
	app     map[string]int // the test's end of the last socket opened on each interface
	openErr error
}

type fakeLink struct {
	spec socketcan.LinkSpec
	up   bool
}

func newFakeNetdevs(t *testing.T) *fakeNetdevs {
	return &fakeNetdevs{t: t, links: map[string]*fakeLink{}, app: map[string]int{}}
}

func (f *fakeNetdevs) record(format string, args ...any) {
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

func (f *fakeNetdevs) Ensure(spec socketcan.LinkSpec) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("ensure %s", spec.Name)
	if l, ok := f.links[spec.Name]; ok {
		if l.spec != spec {
			return false, fmt.Errorf("fake: %s exists as %+v, asked for %+v", spec.Name, l.spec, spec)
		}
		l.up = true
		return false, nil
	}
	f.links[spec.Name] = &fakeLink{spec: spec, up: true}
	return true, nil
}

func (f *fakeNetdevs) Open(name string, opt socketcan.Options) (CANSocket, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("open %s", name)
	if f.openErr != nil {
		return nil, f.openErr
	}
	if l, ok := f.links[name]; !ok || !l.up {
		return nil, fmt.Errorf("fake: open %s: no such interface, or down", name)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f.app[name] = fds[0]
	f.t.Cleanup(func() { unix.Close(fds[0]) })
	return &fakeSocket{fd: fds[1]}, nil
}

func (f *fakeNetdevs) TakeDown(spec socketcan.LinkSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("down %s", spec.Name)
	l, ok := f.links[spec.Name]
	if !ok {
		return fmt.Errorf("fake: take down %s: %w", spec.Name, unix.ENODEV)
	}
	l.up = false
	return nil
}

func (f *fakeNetdevs) Delete(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("delete %s", name)
	if _, ok := f.links[name]; !ok {
		return fmt.Errorf("fake: delete %s: %w", name, unix.ENODEV)
	}
	delete(f.links, name)
	return nil
}

// state is the link cand opens on as name: "up", "down" or "absent".
func (f *fakeNetdevs) state(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch l, ok := f.links[name]; {
	case !ok:
		return "absent"
	case l.up:
		return "up"
	}
	return "down"
}

// takeCalls returns the calls so far and forgets them.
func (f *fakeNetdevs) takeCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

type fakeSocket struct{ fd int }

func (s *fakeSocket) Fd() int           { return s.fd }
func (s *fakeSocket) Warnings() []error { return nil }
func (s *fakeSocket) Close() error      { return unix.Close(s.fd) }

// startOnNetdevs runs the daemon with cfg on nd's interfaces (no
// Options.Sockets), metrics and status off, and returns once it bridges; the
// test's ends are the applications' sockets nd opened. more sets further
// options.
func startOnNetdevs(t *testing.T, cfg *config.Config, nd *fakeNetdevs, more ...func(*Options)) *rig {
	t.Helper()
	r := &rig{t: t, cfg: cfg}
	r.books.init(len(cfg.Controllers))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.Default()
	}
	opt := Options{Version: "test", Log: log, Netdevs: nd}
	for _, f := range more {
		f(&opt)
	}
	r.start(inproc.Options{}, opt)
	for i := range cfg.Controllers {
		r.host = append(r.host, nd.app[linkSpec(&cfg.Controllers[i]).Name])
	}
	return r
}

func lifecycleConfig(t *testing.T) *rigConfig {
	return newRigConfig(t).metricsKey("listen", `""`).peer(answerPeer("echo", 1))
}

// roundTrip sends a frame as an application on the interface and waits for the
// answer peer's reply through cand.
func (r *rig) roundTrip(id uint32) {
	r.t.Helper()
	r.write(0, can.Frame{ID: id, Length: 1, Data: can.Data{byte(id)}})
	r.expectAnswer(can.Frame{ID: id + 1, Length: 1, Data: can.Data{byte(id)}})
}

// The interface outlives cand as a kernel driver's netdev does: created and up
// at the first start, set down (not removed) at exit, and served again, up, by
// the next start.
func TestInterfaceOutlivesRestart(t *testing.T) {
	nd := newFakeNetdevs(t)
	cfg := lifecycleConfig(t).build()
	for run, want := range [][]string{{"ensure vcan0", "open vcan0"}, {"ensure vcan0", "open vcan0"}} {
		r := startOnNetdevs(t, cfg, nd)
		if got := nd.takeCalls(); !slices.Equal(got, want) {
			t.Fatalf("start %d: calls %q, want %q", run, got, want)
		}
		if s := nd.state("vcan0"); s != "up" {
			t.Fatalf("start %d: vcan0 %s while cand serves it, want up", run, s)
		}
		r.roundTrip(0x100 + uint32(run)*2)
		r.stop()
		if got, want := nd.takeCalls(), []string{"down vcan0"}; !slices.Equal(got, want) {
			t.Fatalf("stop %d: calls %q, want %q", run, got, want)
		}
		if s := nd.state("vcan0"); s != "down" {
			t.Fatalf("after stop %d: vcan0 %s, want down (kept for the applications)", run, s)
		}
	}
}

func TestInterfaceRemovedOnExit(t *testing.T) {
	nd := newFakeNetdevs(t)
	r := startOnNetdevs(t, lifecycleConfig(t).interfaceKey("remove_on_exit", true).build(), nd)
	r.roundTrip(0x100)
	r.stop()
	if got, want := nd.takeCalls(), []string{"ensure vcan0", "open vcan0", "delete vcan0"}; !slices.Equal(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
	if s := nd.state("vcan0"); s != "absent" {
		t.Fatalf("vcan0 %s after exit with remove_on_exit, want absent", s)
	}
}

// kind vxcan: cand holds interface.peer, the applications get interface.name,
// created in interface.netns.
func TestVXCANApplicationsGetTheName(t *testing.T) {
	nd := newFakeNetdevs(t)
	cfg := lifecycleConfig(t).named("sim0", "can0").vxcan().interfaceKey("netns", "/run/netns/app").build()
	r := startOnNetdevs(t, cfg, nd)
	want := socketcan.LinkSpec{Name: "can0p", Kind: socketcan.KindVXCAN, Peer: "can0", PeerNetNS: socketcan.NetNS{Path: "/run/netns/app"}, MTU: socketcan.CAN_MTU}
	if got := nd.links["can0p"]; got == nil || got.spec != want {
		t.Fatalf("links %v; want can0p as %+v", nd.links, want)
	}
	r.roundTrip(0x100)
	if m := r.d.Owner.Ports[0].M; m.Interface() != "can0" {
		t.Errorf("metrics label interface=%q, want the applications' name can0", m.Interface())
	}
	r.stop()
	if got, want := nd.takeCalls(), []string{"ensure can0p", "open can0p", "down can0p"}; !slices.Equal(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
}

// A socket that cannot be opened stops the start; the interface cand just made
// goes again, one that was there already is left down.
func TestInterfaceOpenFails(t *testing.T) {
	nd := newFakeNetdevs(t)
	nd.openErr = errors.New("no AF_CAN")
	for _, tc := range []struct {
		exists bool
		want   []string
		state  string
	}{
		{false, []string{"ensure vcan0", "open vcan0", "delete vcan0"}, "absent"},
		{true, []string{"ensure vcan0", "open vcan0", "down vcan0"}, "down"},
	} {
		if tc.exists {
			nd.links["vcan0"] = &fakeLink{spec: linkSpec(&lifecycleConfig(t).build().Controllers[0])}
		}
		err := Run(context.Background(), lifecycleConfig(t).build(), Options{Version: "test", Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Netdevs: nd})
		if !errors.Is(err, nd.openErr) {
			t.Fatalf("Run = %v, want the open error", err)
		}
		if got := nd.takeCalls(); !slices.Equal(got, tc.want) || nd.state("vcan0") != tc.state {
			t.Fatalf("existing %v: calls %q, vcan0 %s; want %q, %s", tc.exists, got, nd.state("vcan0"), tc.want, tc.state)
		}
	}
}
