package kernelref

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cand/config"
	"cand/internal/waitfor"
	"cand/sim"
	"cand/socketcan"
)

func testConfig(t *testing.T, peers string) *config.Config {
	t.Helper()
	// The Pi 2 its costs come from, under the strict rule at fixed clocks, which
	// the reference's charges need (Run).
	cfg, err := config.Parse("kref.yaml", []byte(`hardware: {backend: sim, sim_board: pi2, sim_cpu: strict, sim_force_turbo: true}
realtime: {priority: 0, mlockall: false}
metrics: {listen: ""}
status: {socket: ""}
controllers:
  - name: k0
    bitrate: 1000000
    interface: {name: vcan0}
    sim:
      peers:
        - `+peers+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// runFor runs the driver on a fresh virtual Pi of cfg and reads its socket: after
// warm data frames (the start-up's), n more (or until a deadline). It returns the
// port's counters and those n frames' last data byte.
func runFor(t *testing.T, cfg *config.Config, warm, n int, trace func(int, string)) (*Stats, []byte) {
	t.Helper()
	pi, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pi.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pi.Start(ctx)
	ready := make(chan []Port, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Pi: pi, Cfg: cfg, Sockets: []int{fds[1]}, Costs: Pi2, Trace: trace}, func(p []Port) { ready <- p })
	}()
	var st *Stats
	select {
	case ports := <-ready:
		st = ports[0].Stats
	case err := <-done:
		t.Fatal(err)
	}
	var got []byte
	var b [socketcan.FrameSize]byte
	seen := 0
	waitfor.Until(10*time.Second, func() bool {
		pfd := []unix.PollFd{{Fd: int32(fds[0]), Events: unix.POLLIN}}
		unix.Poll(pfd, 20)
		for len(got) < n {
			if _, err := unix.Read(fds[0], b[:]); err != nil {
				break
			}
			f, kind := socketcan.Decode(&b)
			if kind != socketcan.FrameData {
				continue
			}
			if seen++; seen > warm {
				got = append(got, f.Data[7])
			}
		}
		return len(got) >= n
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return st, got
}

// Isolated frames on the virtual Pi, after the start-up's: every interrupt is the
// sequence of TestISTSequence's first case, 4 transfers and 26 bytes for one
// frame, and the frame reaches the socket IRQ + ThreadWake + 2 transfers'
// overheads and 18 bytes of wire after its INT, at least (the last two transfers
// come after it).
func TestIsolatedFramesOnTheVirtualPi(t *testing.T) {
	var mu sync.Mutex
	var log []string
	trace := func(_ int, ev string) { mu.Lock(); log = append(log, ev); mu.Unlock() }
	// 10 ms apart: isolated even when the host holds the driver thread up for a few
	// milliseconds (at 2 ms, two frames now and then shared one handler run).
	st, got := runFor(t, testConfig(t, "{kind: periodic, name: p, ids: [0x123], dlc: 8, period: 10ms}"), 10, 20, trace)
	if len(got) < 20 {
		t.Fatalf("%d frames in 10 s", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1]+1 {
			t.Fatalf("frame %d carries %d after %d", i, got[i], got[i-1])
		}
	}
	mu.Lock()
	runs := strings.Split(strings.Join(log, " "), "ist ")
	mu.Unlock()
	// The start-up (open's transfers, the first frames) and the run in progress at
	// the stop are left out.
	runs = runs[min(len(runs), 10) : len(runs)-1]
	if len(runs) < 15 {
		t.Fatalf("%d handler runs after the start-up", len(runs))
	}
	for i, r := range runs {
		if strings.TrimSpace(r) != "03/4 90/14 03/4 03/4" {
			t.Fatalf("handler run %d: %s, want 03/4 90/14 03/4 03/4", i, r)
		}
	}
	e2e := st.RXEndToEnd.Snapshot()
	floor := Pi2.IRQ + Pi2.ThreadWake + 2*Pi2.PerTransfer() + 18*900*time.Nanosecond
	if e2e.P50 < floor {
		t.Errorf("rx end-to-end p50 %v, below the charged %v", e2e.P50, floor)
	}
	t.Logf("rx end-to-end %v (charged floor %v)", e2e, floor)
}
