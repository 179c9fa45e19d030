package daemon

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cand/bridge"
	"cand/internal/inproc"
	"cand/internal/waitfor"
	"cand/sim"
	"cand/socketcan"
)

// What the fault tests add to the rig: a link-event source in place of the
// kernel's, faults injected before the daemon starts, and the daemon's log.

// rigOptions are what startRig does besides running the configuration.
type rigOptions struct {
	links      bool              // the daemon follows a fakeLinks (rig.links)
	before     []func(*sim.Pi)   // run on the virtual Pi before the daemon starts
	configPath string            // Options.ConfigPath (reloadable)
	onLog      func(line string) // called with each line the daemon logs, on the logging goroutine
}

// withLinks gives the daemon a link-event source the test drives (rig.links).
func (c *rigConfig) withLinks() *rigConfig {
	c.opts.links = true
	return c
}

// beforeStart runs fn on the virtual Pi before the daemon starts (a chip missing
// at start).
func (c *rigConfig) beforeStart(fn func(*sim.Pi)) *rigConfig {
	c.opts.before = append(c.opts.before, fn)
	return c
}

// onLog calls fn with each line the daemon logs, on the goroutine that logs it
// (the owner thread for the bridge's lines) and before that goroutine goes on: a
// test holds the owner at a chosen point with it.
func (c *rigConfig) onLog(fn func(line string)) *rigConfig {
	c.opts.onLog = fn
	return c
}

// onDelete sets interface.on_delete (a key after name in the interface's flow
// mapping).
func (c *rigConfig) onDelete(what string) *rigConfig {
	c.last().iface += ", on_delete: " + what
	return c
}

// logBuffer keeps what the daemon logs (and shows it with -v).
type logBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	hook func(line string) // rigOptions.onLog
}

func (l *logBuffer) Write(p []byte) (int, error) {
	n, err := l.write(p)
	if l.hook != nil {
		l.hook(string(p))
	}
	return n, err
}

func (l *logBuffer) write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if testing.Verbose() {
		os.Stderr.Write(p)
	}
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// lines returns the logged lines that contain every part.
func (l *logBuffer) lines(parts ...string) []string {
	var out []string
	for _, line := range strings.Split(l.String(), "\n") {
		all := line != ""
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			out = append(out, line)
		}
	}
	return out
}

// waitLog waits up to d for a log line that contains every part, and returns it.
func (r *rig) waitLog(d time.Duration, parts ...string) string {
	r.t.Helper()
	var line string
	waitfor.Cond(r.t, d, "a log line with "+strings.Join(parts, " … "), func() bool {
		if ls := r.log.lines(parts...); len(ls) > 0 {
			line = ls[0]
			return true
		}
		return false
	})
	return line
}

// powerCycle resets controller i's chip as a brown-out would, and books the frames
// that waited in its RX buffers (lost with the reset).
func (r *rig) powerCycle(i int) {
	wiped := r.pi.Node(i).Chip.PowerCycleLosing(r.pi.Clock().Reach())
	r.books.mu.Lock()
	r.books.wiped[i] += wiped
	r.books.mu.Unlock()
}

// expectPeerFrames reads controller 0's socket until n data frames with ID id came;
// RX-overflow error frames may come between them (a peer's frames queued while the
// chip was off the bus come back to back and may overflow it once), anything else
// fails the test.
func (r *rig) expectPeerFrames(n int, id uint32, when string) {
	r.t.Helper()
	for i := 0; i < n; {
		f, k, err := r.read(0, 5*time.Second)
		switch {
		case err == nil && isRXOverflow(f, k):
		case err != nil || k != socketcan.FrameData || f.ID != id:
			r.t.Fatalf("frames %s: %v %v %v", when, f, k, err)
		default:
			i++
		}
	}
}

// fakeLinks stands in for rtnetlink: the test sets an interface's state, the
// daemon gets an event and asks for the state, as from the kernel. Recreate makes
// a new socketpair: its daemon end goes to the owner thread, its host end becomes
// the test's (the old one stays open in old: what the daemon wrote there is still
// read).
type fakeLinks struct {
	r      *rig
	mu     sync.Mutex
	state  []bridge.LinkState
	old    [][]int // the host ends replaced, per controller (rig.hostMu)
	events chan socketcan.LinkEvent
}

func newFakeLinks(r *rig) *fakeLinks {
	n := len(r.cfg.Controllers)
	return &fakeLinks{r: r, state: make([]bridge.LinkState, n), old: make([][]int, n), events: make(chan socketcan.LinkEvent, 16)}
}

// set changes controller i's interface, as `ip link set … down`, `up` or `ip link
// del` would, and sends the event.
func (f *fakeLinks) set(i int, st bridge.LinkState) {
	f.mu.Lock()
	f.state[i] = st
	f.mu.Unlock()
	e := socketcan.LinkEvent{Link: socketcan.Link{Name: f.r.cfg.Controllers[i].Interface.Name}, Deleted: st == bridge.LinkGone}
	if st == bridge.LinkUp {
		e.Flags = unix.IFF_UP
	}
	f.events <- e
}

func (f *fakeLinks) Watch(ctx context.Context, fn func(socketcan.LinkEvent)) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case e := <-f.events:
			fn(e)
		}
	}
}

func (f *fakeLinks) State(i int) (bridge.LinkState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state[i], nil
}

func (f *fakeLinks) Recreate(i int) (int, error) {
	host, end, err := inproc.Pair(rigQueues()) // the same queues as startRig's pairs
	if err != nil {
		return -1, err
	}
	f.r.hostMu.Lock()
	old := f.r.host[i]
	f.old[i] = append(f.old[i], old)
	f.r.host[i] = host // closed with the rig's ends
	f.r.hostMu.Unlock()
	f.r.t.Cleanup(func() { unix.Close(old) })
	f.mu.Lock()
	f.state[i] = bridge.LinkUp // created up, as EnsureLink leaves it
	f.mu.Unlock()
	return end, nil
}

// hostEnds is every host end controller i had, the one in use last.
func (r *rig) hostEnds(i int) []int {
	r.hostMu.Lock()
	defer r.hostMu.Unlock()
	var ends []int
	if r.links != nil {
		ends = append(ends, r.links.old[i]...)
	}
	return append(ends, r.host[i])
}
