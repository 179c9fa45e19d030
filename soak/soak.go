package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"cand/config"
	"cand/daemon"
	"cand/internal/inproc"
	"cand/sim"
)

// DefaultDuration is how long `cand soak` runs unless told.
const DefaultDuration = 30 * time.Minute

// Options are a soak run's settings.
type Options struct {
	Duration time.Duration
	// TXRate is the writer's frames per second (default 500).
	TXRate int
	// Seed picks the faults and their times (0: from the time).
	Seed uint64
	// Progress, when set, gets a line per minute.
	Progress io.Writer
	// Rule is the virtual Pi's clock rule (default config.SimCPUStrict: cand's own
	// time charged at the board's cost, so chip overflows happen and must each
	// be explained; config.SimCPUDedicated forgives it).
	Rule config.SimCPU
}

// yaml is the run's configuration: one controller at 1 Mbit/s with automatic
// restart after bus-off, a load peer at 100 %, the virtual Pi's clock on the rule
// RULE.
const yaml = `hardware: {backend: sim, sim_cpu: RULE}
realtime: {priority: 0, mlockall: false}
metrics: {listen: ""}
status: {socket: ""}
controllers:
  - name: soak0
    bitrate: 1000000
    restart_ms: 50
    interface: {name: vcan0}
    sim:
      peers:
        - {kind: load, name: load, ids: [0x123], dlc: 8, load_percent: 100}
`

// warmUp is how long after the daemon is ready the start resources are sampled:
// the first frames, faults and GC cycles settle the heap and the goroutines.
func warmUp(d time.Duration) time.Duration { return min(d/10, time.Minute) }

// Run runs the soak for o.Duration and returns its report. An error means the run
// itself could not be made (the daemon did not start or stop, a socket failed).
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.TXRate <= 0 {
		o.TXRate = 500
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	if o.Rule == "" {
		o.Rule = config.SimCPUStrict
	}
	cfg, err := config.Parse("soak.yaml", []byte(strings.Replace(yaml, "RULE", string(o.Rule), 1)))
	if err != nil {
		return nil, err
	}
	pi, err := sim.New(cfg)
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h, err := inproc.Start(ctx, inproc.Options{Controllers: 1},
		func(ctx context.Context, e inproc.Env[*daemon.Daemon]) error {
			return daemon.Run(ctx, cfg, daemon.Options{Version: "soak", Log: log, Sockets: e.Sockets, Sim: pi, Ready: e.Ready})
		})
	if err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	defer h.Close()
	d, host := h.D, h.Host[0]

	l := &listener{}
	pi.Node(0).Bus.Attach(l)
	rep := &Report{Seed: o.Seed, TXRate: o.TXRate, Rule: o.Rule}
	began := time.Now()
	tctx, stopTraffic := context.WithCancel(ctx)
	defer stopTraffic()
	win := &window{}
	w, rd := &writer{}, newReader(host, win)
	in := &injector{pi: pi, rd: rd, win: win, rng: rand.New(rand.NewPCG(o.Seed, o.Seed>>32|1))}
	in.gapMin, in.gapMax = gaps(o.Duration)
	wDone, rDone, fDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() { defer close(wDone); w.run(tctx, host, o.TXRate) }()
	go func() { defer close(rDone); rd.run(tctx) }()
	go func() { defer close(fDone); in.run(tctx) }()

	if wait(ctx, warmUp(o.Duration)) {
		rep.Start = sampleResources()
	}
	end := began.Add(o.Duration)
	for ctx.Err() == nil && time.Now().Before(end) {
		if !wait(ctx, min(time.Minute, time.Until(end))) {
			break
		}
		if o.Progress != nil {
			m := d.Owner.Ports[0].M
			fmt.Fprintf(o.Progress, "soak: %v of %v: %d TX frames written, cand sent %d and wrote %d RX frames; %d faults\n",
				time.Since(began).Round(time.Second), o.Duration, w.written.Load(), m.TXFrames.Load(), m.RXFrames.Load(), in.injected.Load())
		}
	}
	rep.End = sampleResources()
	rep.Elapsed = time.Since(began)

	// The writer and the fault injector stop first (the faults they undo), then the
	// daemon (which counts what it left in the socket queue), then the reader, which
	// reads what the daemon wrote last.
	stopTraffic()
	<-wDone
	<-fDone
	<-rDone
	switch ok, err := h.Stop(); {
	case !ok:
		return nil, fmt.Errorf("soak: the daemon did not stop within %v", inproc.StopTimeout)
	case err != nil && !errors.Is(err, context.Canceled):
		return nil, fmt.Errorf("soak: daemon: %w", err)
	}
	if err := rd.drain(); err != nil {
		return nil, fmt.Errorf("soak: reading cand's socket: %w", err)
	}
	if rd.err != nil {
		return nil, fmt.Errorf("soak: reading cand's socket: %w", rd.err)
	}
	rep.account(d.Owner.Ports[0].M, pi, w, rd, l, in)
	return rep, ctx.Err()
}
