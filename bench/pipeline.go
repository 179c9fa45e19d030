package bench

import (
	"context"
	"fmt"
	"runtime"
	"time"

	dto "github.com/prometheus/client_model/go"
	"golang.org/x/sys/unix"

	"cand/config"
	"cand/hw/bcm2835"
	"cand/internal/kernelop"
	"cand/mcp2515"
	"cand/metrics"
	"cand/sim"
	"cand/sim/clock"
	"cand/sim/soc"
)

// Scenario is one full-pipeline run on the virtual Pi, the daemon's sockets read
// (and, with a TX stream, written) by the benchmark: a workload (workload.go), or
// the classic one controller with one peer that sends 8-byte (DLC) frames with a
// counter.
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
	// Workload, when set, replaces the classic peer of LoadPercent, Period, Burst
	// and DLC.
	Workload *Workload
	// Kernel also runs the workload the kernel driver's way (kernel.go).
	Kernel bool
	// StopAtFirstLoss ends the measured window early at the first RX overflow
	// or sequence gap (a search that only asks whether a load loses frames).
	StopAtFirstLoss bool
	// WarmUp runs the traffic this long (host time) after the daemon is ready,
	// its frames read and not counted, before the measured window: the
	// window then measures a running bridge rather than its first
	// milliseconds (cold caches, the host-noise rule's medians not yet known,
	// on the stock governor an idle ARM clock). 0: the window opens at once.
	WarmUp time.Duration
	// Observe, when set, adds an observer to the run on the virtual Pi, made
	// before the daemon starts (e.g. the post-mortem, package bench/postmortem).
	Observe func(*Watched) Observer
}

// Base carries the settings a scenario takes from the user's configuration.
type Base struct {
	Hardware config.Hardware
	Realtime config.Realtime
	SPI      config.SPI
	// IntGPIO and OscillatorHz, when set, are the first controller's INT pin and
	// crystal (a real board's wiring, BoardBaseOf); 0 keeps the scenario's.
	IntGPIO      int
	OscillatorHz uint32
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
	return `hardware: {backend: sim}
realtime: {priority: 0, mlockall: false}
metrics: {listen: ""}
status: {socket: ""}
` + sc.controllersYAML()
}

// Config builds the scenario's configuration on top of base (nil: defaults).
func (sc Scenario) Config(base *Base) (*config.Config, error) {
	if sc.DLC < 8 && sc.Workload == nil {
		return nil, fmt.Errorf("bench: scenario %s: dlc %d: frames need 8 data bytes to carry the counter loss is measured with (other lengths: a Workload)", sc.Name, sc.DLC)
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
	applyBaseToAll(cfg, base)
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
	res.Workload = sc.workload().Kind
	if sc.Burst > 1 && sc.LoadPercent > 0 {
		return res, fmt.Errorf("bench: scenario %s: burst %d with load_percent %g: bursts come from periodic peers; set load_percent 0", sc.Name, sc.Burst, sc.LoadPercent)
	}
	cfg, err := sc.Config(base)
	if err != nil {
		return res, err
	}
	if cfg.Hardware.Backend == config.BackendBCM2835 {
		return runOnBoard(ctx, sc, cfg, res)
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

	if sc.Stress {
		stop, err := StartStress(sc.Duration + 30*time.Second)
		if err != nil {
			return res, err
		}
		defer stop()
	}
	watched := &Watched{Pi: pi, Bitrate: sc.Bitrate}
	var added Observer
	if sc.Observe != nil {
		added = sc.Observe(watched) // before the peers start: it may observe the bus
	}
	h, err := startDaemon(ctx, sc.Name, cfg, pi)
	if err != nil {
		return res, err
	}
	defer h.close()

	m := h.d.Owner.Ports[0].M
	wl := sc.workload()
	w := &window{m: m, board: pi.Clock().Reached, ring: h.d.Owner.RingWaiting}
	pw := h.portsWindow()
	r := newReader(h.hosts(), simStreams(pi, wl), wl.TX, wl.Loopback, pi.Clock().Now, m.TXFrames.Load)
	busy := newBusyWatch(h)
	watched.Threads, watched.streams = h.d.Threads(), r.streams
	obs := []Observer{w, pw, &arbWatch{chip: pi.Node(0).Chip}, busy, &heartbeatWatch{age: h.d.Owner.HeartbeatAge, at: h.d.Owner.HeartbeatAt, board: pi.Clock().Reached},
		newDeliveryWatch(h.d)}
	if added != nil {
		obs = append(obs, added)
	}
	r.lost = lossCheck(sc, m, w, r, obs)
	for end := time.Now().Add(sc.WarmUp); time.Now().Before(end) && ctx.Err() == nil; {
		r.discard()
		time.Sleep(time.Millisecond)
	}
	res.WarmUpMs = float64(sc.WarmUp) / 1e6
	err = observe(ctx, r, sc.Duration, obs, &res)
	// Stop the daemon first: the histograms are read once nothing writes them.
	if serr := h.stop(); err == nil {
		err = serr
	}
	// On an error the figures measured so far are still reported with it.
	res.fillWindow(w, r, pw.d, h, cfg, byteNs)
	res.Stages["board_int_low"] = stageOf(pi.INTLow(0).Snapshot())
	res.Clock = clockOf(pi)
	if sc.Burst > 1 {
		res.Burst = burstOf(sc, m, w)
	}
	if sc.Kernel && ctx.Err() == nil {
		res.Kernel = runKernel(ctx, sc, cfg)
	}
	return res, err
}

// observe measures r's window of dur with the observers obs: each is started
// at the window's start, stopped at the end of the offered frames, and writes
// its figures into res after the drain.
func observe(ctx context.Context, r *reader, dur time.Duration, obs []Observer, res *ScenarioResult) error {
	err := r.run(ctx, dur, func() {
		for _, o := range obs {
			o.Begin()
		}
	}, func() {
		for _, o := range obs {
			o.Stop()
		}
	})
	for _, o := range obs {
		o.End(res)
	}
	return err
}

// lossCheck is the reader's check between reads (nil: none needed): it tells
// every LossWatcher of obs whether the window has lost a frame yet, and ends the
// window at the first loss if sc stops there.
func lossCheck(sc Scenario, m *metrics.Controller, w *window, r *reader, obs []Observer) func() bool {
	var lw []LossWatcher
	for _, o := range obs {
		if l, ok := o.(LossWatcher); ok {
			lw = append(lw, l)
		}
	}
	if len(lw) == 0 && !sc.StopAtFirstLoss {
		return nil
	}
	return func() bool {
		lost, why := false, ""
		switch {
		case m.RXOverflows.Load() != w.overflows0:
			lost, why = true, "rx_overflow"
		case sum(r.streams, false).gaps > 0:
			lost, why = true, "sequence_gap"
		}
		for _, l := range lw {
			l.Loss(lost, why)
		}
		return lost && sc.StopAtFirstLoss
	}
}

// window holds the counters at the start of the measured window and their deltas.
type window struct {
	m                             *metrics.Controller
	start                         time.Time
	ms                            runtime.MemStats
	ru                            unix.Rusage
	rx0, spiT0, spiB0, overflows0 uint64
	ints0, polled0                uint64
	mallocs                       uint64
	cpu, elapsed                  time.Duration
	// board is the board's time as its hardware reached it (nil: host time
	// only); boardElapsed the window in it.
	board                    func() int64
	boardStart, boardElapsed int64
	// ring is the frames waiting in the owner's RX rings now (nil: not known);
	// ringAtClose what it said when the window closed.
	ring        func() uint64
	ringAtClose uint64
}

func (w *window) begin() {
	runtime.ReadMemStats(&w.ms)
	unix.Getrusage(unix.RUSAGE_SELF, &w.ru)
	w.rx0, w.spiT0, w.spiB0, w.overflows0 = w.m.RXFrames.Load(), w.m.RXSPITransfers.Load(), w.m.RXSPIBytes.Load(), w.m.RXOverflows.Load()
	w.ints0, w.polled0 = w.m.Interrupts.Load(), w.m.PolledInts.Load()
	w.start = time.Now()
	if w.board != nil {
		w.boardStart = w.board()
	}
}

// stop records the elapsed time (the end of the offered frames), in host time and
// in the board's.
func (w *window) stop() {
	w.elapsed = time.Since(w.start)
	if w.ring != nil {
		w.ringAtClose = w.ring()
	}
	if w.board != nil {
		w.boardElapsed = w.board() - w.boardStart
	}
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

// StageNames lists the stages in table order.
var StageNames = []string{"int_to_handler", "handler_to_cs", "rx_end_to_end", "int_handled", "tx_socket_to_rts", "tx_socket_to_done", "both_rx_full", "rx_chip_to_ring", "rx_ring_to_socket"}

func stages(m *metrics.Controller) map[string]Stage {
	out := map[string]Stage{}
	for i, h := range []*metrics.Histogram{m.IntToHandler, m.HandlerToCS, m.RXEndToEnd, m.IntHandled, m.TXSocketToRTS, m.TXSocketToDone, m.BothRXFull, m.RXChipToRing, m.RXRingToSocket} {
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

// clockOf is what the virtual Pi's clock did over the run, in report units.
func clockOf(pi *sim.Pi) ClockResult {
	cs := pi.Clock().Stats()
	b := pi.Board()
	arm, core := pi.Clocks()
	r := ClockResult{Rule: string(pi.Rule()), Board: string(b.Name), Model: b.Model, CPU: b.CPU, Cores: b.Cores,
		CPUFactor: pi.Factor(), ARMMHz: float64(arm) / 1e6, CoreMHz: float64(core) / 1e6,
		HostKernelNs: b.Host.KernelNs, HostHandOffNs: b.Host.HandOffNs,
		RemovedMs: map[string]float64{}, Removals: map[string]uint64{}, RemovedMaxUs: float64(cs.MaxRemovalNs) / 1e3,
		ChargedMs: map[string]float64{"cpu_scaled": ms(cs.ScaledNs), "park": ms(cs.ParkNs), "wake_up": ms(cs.WakeNs), "shared_core": ms(cs.SharedCoreNs),
			"kernel": ms(cs.KernelNs), "clock_read": ms(cs.ClockReadNs)},
		Parks: cs.Parks, WakeUps: cs.Wakes, ForgivingMs: ms(cs.ForgivingNs),
		AheadMs:           ms(pi.Clock().Ahead()),
		CPUFactorRun:      Spread(cs.Factor),
		HostKernelNsRun:   Spread(cs.HostKernelNs),
		CalibrationBursts: cs.CalibBursts}
	if b.Host.KernelNs > 0 {
		r.BoardKernelNs = b.KernelNs(arm)
	}
	r.ClockReads = cs.ClockReads
	for _, st := range pi.Clock().Stretches() {
		if len(r.Stretches) == OwnerStretches {
			break
		}
		r.Stretches = append(r.Stretches, StretchResult{From: soc.SiteName(st.From), To: soc.SiteName(st.To), Calls: st.Calls, Reads: st.Reads,
			Gaps: st.Gaps, RunMs: ms(st.RunNs), NoiseMs: ms(st.NoiseNs)})
	}
	for op, k := range cs.Kernel {
		if k.Calls > 0 {
			if r.SystemCalls == nil {
				r.SystemCalls = map[string]SystemCalls{}
			}
			r.SystemCalls[kernelop.Op(op).String()] = SystemCalls{Calls: k.Calls, HostMs: ms(k.HostNs), BoardMs: ms(k.BoardNs)}
		}
	}
	for c := clock.Category(0); c < clock.NumCategories; c++ {
		r.RemovedMs[c.String()] = ms(cs.Removed[c].Ns)
		r.Removals[c.String()] = cs.Removed[c].Count
	}
	return r
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }
