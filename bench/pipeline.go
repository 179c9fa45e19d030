package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"time"

	dto "github.com/prometheus/client_model/go"
	"golang.org/x/sys/unix"

	"cand/config"
	"cand/daemon"
	"cand/hw/bcm2835"
	"cand/mcp2515"
	"cand/metrics"
	"cand/sim"
	"cand/sim/canbus"
	"cand/sim/clock"
	"cand/sim/soc"
	"cand/socketcan"
)

// Scenario is one full-pipeline run: one controller on the virtual Pi, one peer
// that sends 8-byte (DLC) frames with a counter, the daemon's socket read by the
// benchmark.
type Scenario struct {
	Name    string
	Bitrate uint32
	// LoadPercent is the load peer's share of bus time (1..100); 0 means isolated
	// frames from a periodic peer every Period instead.
	LoadPercent float64
	Period      time.Duration
	DLC         uint8
	// IntPollWindow is the controller's int_poll_window (0 = off).
	IntPollWindow time.Duration
	// Burst > 1 replaces the periodic peer by Burst periodic peers with IDs
	// 0x123, 0x124, ... and the same Period, started together: every Period they
	// offer Burst frames at once, which the bus sends back to back (lowest ID
	// first, 3 bits of intermission between them). Needs LoadPercent 0.
	Burst int
	// Stress keeps the other core busy with stress-ng (CPU and I/O workers).
	Stress bool
	// SharedCPU runs the virtual Pi on host time (hardware.sim_cpu: shared).
	SharedCPU bool
	// Rule is the virtual Pi's clock rule (hardware.sim_cpu; "": the base's,
	// strict by default); SharedCPU overrides it. dedicated is the forgiving
	// rule, for comparison.
	Rule config.SimCPU
	// Board is the board the virtual Pi plays (hardware.sim_board; "": the
	// base's, pi3 by default).
	Board    config.SimBoard
	Duration time.Duration
}

// Base carries the settings a scenario takes from the user's configuration.
type Base struct {
	Hardware config.Hardware
	Realtime config.Realtime
	SPI      config.SPI
}

// BaseOf takes the hardware (forced to the sim backend), realtime and first
// controller's SPI settings of cfg.
func BaseOf(cfg *config.Config) Base {
	b := Base{Hardware: cfg.Hardware, Realtime: cfg.Realtime}
	b.Hardware.Backend = config.BackendSim
	if len(cfg.Controllers) > 0 {
		b.SPI = cfg.Controllers[0].SPI
	}
	return b
}

func (sc Scenario) yaml() string {
	var peer string
	switch {
	case sc.LoadPercent > 0:
		peer = fmt.Sprintf("{kind: load, name: load, ids: [0x123], dlc: %d, load_percent: %g}", sc.DLC, sc.LoadPercent)
	case sc.Burst > 1:
		for i := range sc.Burst {
			if i > 0 {
				peer += "\n        - "
			}
			peer += fmt.Sprintf("{kind: periodic, name: burst%d, ids: [%#x], dlc: %d, period: %s}", i, 0x123+i, sc.DLC, sc.Period)
		}
	default:
		peer = fmt.Sprintf("{kind: periodic, name: periodic, ids: [0x123], dlc: %d, period: %s}", sc.DLC, sc.Period)
	}
	return fmt.Sprintf(`hardware: {backend: sim}
realtime: {priority: 0, mlockall: false}
metrics: {listen: ""}
status: {socket: ""}
controllers:
  - name: bench0
    bitrate: %d
    int_poll_window: %s
    interface: {name: vcan0}
    sim:
      peers:
        - %s
`, sc.Bitrate, sc.IntPollWindow, peer)
}

// config builds the scenario's configuration on top of base (nil: defaults).
func (sc Scenario) config(base *Base) (*config.Config, error) {
	if sc.DLC < 8 {
		return nil, fmt.Errorf("bench: scenario %s: dlc %d: frames need 8 data bytes to carry the counter loss is measured with", sc.Name, sc.DLC)
	}
	cfg, err := config.Parse(sc.Name+".yaml", []byte(sc.yaml()))
	if err != nil {
		return nil, err
	}
	if base != nil {
		cfg.Hardware = base.Hardware
		cfg.Realtime = base.Realtime
		cfg.Controllers[0].SPI = base.SPI
	}
	if sc.Rule != "" {
		cfg.Hardware.SimCPU = sc.Rule
	}
	if sc.Board != "" {
		cfg.Hardware.SimBoard = sc.Board
	}
	if sc.SharedCPU {
		cfg.Hardware.SimCPU = config.SimCPUShared
	}
	return cfg, nil
}

// RunScenario runs sc and measures it. Stage latencies cover the whole run (from
// the controller joining the bus); frames, CPU time and allocations cover the
// measured window of sc.Duration after the daemon is ready.
func RunScenario(ctx context.Context, sc Scenario, base *Base) (ScenarioResult, error) {
	res := ScenarioResult{Name: sc.Name, Bitrate: sc.Bitrate, LoadPercent: sc.LoadPercent, DLC: sc.DLC,
		IntPollWindowUs: us(sc.IntPollWindow), Stress: sc.Stress, SharedCPU: sc.SharedCPU}
	if sc.Burst > 1 && sc.LoadPercent > 0 {
		return res, fmt.Errorf("bench: scenario %s: burst %d with load_percent %g: bursts come from periodic peers; set load_percent 0", sc.Name, sc.Burst, sc.LoadPercent)
	}
	perPeriod := uint64(max(sc.Burst, 1))
	cfg, err := sc.config(base)
	if err != nil {
		return res, err
	}
	pi, err := sim.New(cfg)
	if err != nil {
		return res, err
	}
	res.Board, res.ClockRule = string(pi.Board().Name), string(pi.Rule())
	_, maxCore := pi.CoreClockRange()
	byteNs, err := spiByteNs(maxCore, cfg.Controllers[0].SPI)
	if err != nil {
		return res, err
	}
	res.SPIByteNs = byteNs

	if sc.Stress {
		stop, err := StartStress(sc.Duration + 30*time.Second)
		if err != nil {
			return res, err
		}
		defer stop()
	}

	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return res, fmt.Errorf("bench: socketpair: %w", err)
	}
	host := fds[0]
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	// A deep queue, as the daemon asks of a real CAN socket with SO_RCVBUFFORCE.
	unix.SetsockoptInt(fds[1], unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, 8<<20)
	unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return res, fmt.Errorf("bench: metrics listener: %w", err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	ready := make(chan *daemon.Daemon, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() {
		done <- daemon.Run(rctx, cfg, daemon.Options{Version: "bench", Log: log, Sockets: []int{fds[1]}, Sim: pi,
			MetricsListener: ln, Ready: func(d *daemon.Daemon) { ready <- d }})
	}()
	stopDaemon := func() error {
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				return fmt.Errorf("bench: %s: daemon: %w", sc.Name, err)
			}
			return nil
		case <-time.After(10 * time.Second):
			return fmt.Errorf("bench: %s: the daemon did not stop within 10s", sc.Name)
		}
	}
	var d *daemon.Daemon
	select {
	case d = <-ready:
	case err := <-done:
		cancel()
		return res, fmt.Errorf("bench: %s: daemon exited before it was ready: %v", sc.Name, err)
	case <-time.After(20 * time.Second):
		stopDaemon()
		return res, fmt.Errorf("bench: %s: daemon not ready after 20s", sc.Name)
	}

	m := d.Owner.Ports[0].M
	peer := pi.Node(0).Peers[0]
	w := window{m: m}
	w.begin(peer.Stats().Sent)
	received, err := readWindow(ctx, host, peer, perPeriod, &w, sc.Duration)
	w.end()
	// Stop the daemon first: the histograms are read once nothing writes them.
	if serr := stopDaemon(); err == nil {
		err = serr
	}
	// On an error the figures measured so far are still reported with it.
	res.DurationS = w.elapsed.Seconds()
	res.FramesOffered = perPeriod * (w.sentEnd - w.sent0)
	res.FramesReceived = received
	if res.FramesOffered > received {
		res.FramesLost = res.FramesOffered - received
	}
	res.RXOverflows = m.RXOverflows.Load() - w.overflows0
	if rx := float64(m.RXFrames.Load() - w.rx0); rx > 0 {
		res.SPITransfersPerRXFrame = float64(m.RXSPITransfers.Load()-w.spiT0) / rx
		res.SPIBytesPerRXFrame = float64(m.RXSPIBytes.Load()-w.spiB0) / rx
		res.WireUsPerRXFrame = res.SPIBytesPerRXFrame * float64(byteNs) / 1e3
	}
	if received > 0 {
		res.AllocsPerFrame = float64(w.mallocs) / float64(received)
		res.CPUUsPerFrame = float64(w.cpu.Microseconds()) / float64(received)
	}
	res.PolledInterrupts = m.PolledInts.Load()
	res.Clock = clockOf(pi)
	res.Stages = stages(m)
	res.Stages["board_int_low"] = stageOf(pi.INTLow(0).Snapshot())
	res.RXHistogram = rxBuckets(d.Metrics)
	if sc.Burst > 1 {
		res.Burst = burstOf(sc, m, &w)
	}
	return res, err
}

// window holds the counters at the start of the measured window and their deltas.
type window struct {
	m                             *metrics.Controller
	start                         time.Time
	ms                            runtime.MemStats
	ru                            unix.Rusage
	sent0, sentEnd                uint64
	rx0, spiT0, spiB0, overflows0 uint64
	ints0, polled0                uint64
	mallocs                       uint64
	cpu, elapsed                  time.Duration
}

func (w *window) begin(sent uint64) {
	runtime.ReadMemStats(&w.ms)
	unix.Getrusage(unix.RUSAGE_SELF, &w.ru)
	w.sent0 = sent
	w.rx0, w.spiT0, w.spiB0, w.overflows0 = w.m.RXFrames.Load(), w.m.RXSPITransfers.Load(), w.m.RXSPIBytes.Load(), w.m.RXOverflows.Load()
	w.ints0, w.polled0 = w.m.Interrupts.Load(), w.m.PolledInts.Load()
	w.start = time.Now()
}

// stop records the end of the offered frames (sentEnd) and the elapsed time.
func (w *window) stop(sent uint64) {
	w.elapsed = time.Since(w.start)
	w.sentEnd = sent
}

// end records the allocation and CPU deltas (after the drain).
func (w *window) end() {
	var ms runtime.MemStats
	var ru unix.Rusage
	runtime.ReadMemStats(&ms)
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	w.mallocs = ms.Mallocs - w.ms.Mallocs
	w.cpu = cpuTime(&ru) - cpuTime(&w.ru)
}

func cpuTime(ru *unix.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// drainTimeout is how long the reader waits, after the window, for the frames
// still on their way (in the chip, the owner thread, the socket).
const drainTimeout = 500 * time.Millisecond

// readWindow reads frames from fd for dur, then stops counting offered frames and
// drains the frames sent before that. It counts the frames whose counter lies in
// [sent0, sentEnd): each is a frame the peer completed on the bus in the window.
// perPeriod peers send in lockstep with peer (bursts), so up to perPeriod frames
// carry each counter. It allocates nothing per frame.
func readWindow(ctx context.Context, fd int, peer *canbus.Peer, perPeriod uint64, w *window, dur time.Duration) (uint64, error) {
	var b [socketcan.FrameSize]byte
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	deadline := w.start.Add(dur)
	var received, stray uint64
	stopped := false
	var drainUntil time.Time
	for {
		now := time.Now()
		if !stopped && !now.Before(deadline) {
			w.stop(peer.Stats().Sent)
			stopped = true
			drainUntil = now.Add(drainTimeout)
		}
		if stopped && (received >= perPeriod*(w.sentEnd-w.sent0) || !now.Before(drainUntil)) {
			return received, nil
		}
		if ctx.Err() != nil {
			return received, ctx.Err()
		}
		unix.Poll(pfd, 20)
		for {
			n, err := unix.Read(fd, b[:])
			if err == unix.EAGAIN || err == unix.EINTR {
				break
			}
			if err != nil {
				return received, fmt.Errorf("bench: reading the daemon's socket: %w", err)
			}
			if n != socketcan.FrameSize {
				return received, fmt.Errorf("bench: %d-byte record from the daemon's socket, want %d", n, socketcan.FrameSize)
			}
			f, k := socketcan.Decode(&b)
			c, ok := canbus.Counter(f)
			if k != socketcan.FrameData || !ok {
				stray++
				continue
			}
			if c >= w.sent0 && (!stopped || c < w.sentEnd) {
				received++
			}
		}
	}
}

// StageNames lists the stages in table order.
var StageNames = []string{"int_to_handler", "handler_to_cs", "rx_end_to_end", "int_handled", "tx_socket_to_rts", "tx_socket_to_done", "both_rx_full"}

// clockOf is what the virtual Pi's clock did over the run, in report units.
func clockOf(pi *sim.Pi) ClockResult {
	cs := pi.Clock().Stats()
	b := pi.Board()
	arm, core := pi.Clocks()
	r := ClockResult{Rule: string(pi.Rule()), Board: string(b.Name), Model: b.Model, CPU: b.CPU, Cores: b.Cores,
		CPUFactor: pi.Factor(), ARMMHz: float64(arm) / 1e6, CoreMHz: float64(core) / 1e6,
		HostKernelNs: b.Host.KernelNs, HostHandOffNs: b.Host.HandOffNs,
		RemovedMs: map[string]float64{}, Removals: map[string]uint64{}, RemovedMaxUs: float64(cs.MaxRemovalNs) / 1e3,
		ChargedMs: map[string]float64{"cpu_scaled": ms(cs.ScaledNs), "park": ms(cs.ParkNs), "wake_up": ms(cs.WakeNs), "shared_core": ms(cs.SharedCoreNs)},
		Parks:     cs.Parks, WakeUps: cs.Wakes, FloorKeptMs: ms(cs.FloorKeptNs), ForgivingMs: ms(cs.ForgivingNs),
		AheadMs: ms(pi.Clock().Ahead())}
	if b.Host.KernelNs > 0 {
		r.BoardKernelNs = b.KernelNs(arm)
	}
	for c := clock.Category(0); c < clock.NumCategories; c++ {
		r.RemovedMs[c.String()] = ms(cs.Removed[c].Ns)
		r.Removals[c.String()] = cs.Removed[c].Count
	}
	return r
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

func stages(m *metrics.Controller) map[string]Stage {
	out := map[string]Stage{}
	for i, h := range []*metrics.Histogram{m.IntToHandler, m.HandlerToCS, m.RXEndToEnd, m.IntHandled, m.TXSocketToRTS, m.TXSocketToDone, m.BothRXFull} {
		out[StageNames[i]] = stageOf(h.Snapshot())
	}
	for op := mcp2515.Op(0); op < mcp2515.NumOps; op++ {
		for comp := metrics.Completion(0); comp < metrics.NumCompletions; comp++ {
			if s := m.Transfer[op][comp].Snapshot(); s.Count > 0 {
				out["spi_"+op.String()+"_"+comp.String()] = stageOf(s)
			}
		}
	}
	return out
}

// rxBuckets reads the rx_end_to_end classic buckets from the registry's
// exposition (the histogram's own buckets are not exported).
func rxBuckets(r *metrics.Registry) []Bucket {
	fams, err := r.Gatherer().Gather()
	if err != nil {
		return nil
	}
	for _, f := range fams {
		if f.GetName() != "cand_stage_latency_seconds" {
			continue
		}
		for _, mt := range f.GetMetric() {
			if !hasLabel(mt, "stage", "rx_end_to_end") || mt.GetHistogram() == nil {
				continue
			}
			var out []Bucket
			var prev uint64
			for _, b := range mt.GetHistogram().GetBucket() {
				c := b.GetCumulativeCount()
				out = append(out, Bucket{UpperUs: b.GetUpperBound() * 1e6, Count: c - prev})
				prev = c
			}
			if total := mt.GetHistogram().GetSampleCount(); total > prev {
				out = append(out, Bucket{UpperUs: -1, Count: total - prev}) // +Inf
			}
			return out
		}
	}
	return nil
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// spiByteNs is the wire time of one SPI byte for the controller's SPI settings:
// the SPI engine's own divider arithmetic on a scratch register model.
func spiByteNs(core uint32, c config.SPI) (int64, error) {
	s := soc.New(core, bcm2835.SoCBCM2837)
	g := bcm2835.NewGPIO(s.GPIO(), bcm2835.SoCBCM2837)
	sp := bcm2835.NewSPI(s.SPI0(), g, bcm2835.SPIOptions{CoreClockHz: core})
	d, err := sp.Device(bcm2835.DeviceConfig{ClockHz: c.ClockHz, Mode: c.Mode, CS: bcm2835.ChipSelect{Native: 0}})
	if err != nil {
		return 0, fmt.Errorf("bench: SPI device for the wire time: %w", err)
	}
	return d.ByteNs(), nil
}
