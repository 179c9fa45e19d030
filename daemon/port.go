package daemon

import (
	"fmt"

	"cand/bridge"
	"cand/config"
	"cand/mcp2515"
	"cand/metrics"
)

// addPorts wires every controller to the owner thread. The returned inits program
// the chips; they run on the owner thread.
func (w *wiring) addPorts() ([]func() error, error) {
	probe := w.hw.probe(w.cfg)
	var inits []func() error
	for i := range w.cfg.Controllers {
		init, err := w.addPort(i, probe)
		if err != nil {
			return nil, err
		}
		inits = append(inits, init)
	}
	return inits, nil
}

// addPort wires controller i: its SPI device and metrics, the MCP2515 driver on
// them, its CAN socket, and its port on the owner thread.
func (w *wiring) addPort(i int, probe *bridge.Probe) (init func() error, err error) {
	cc := &w.cfg.Controllers[i]
	bt, err := Timing(cc)
	if err != nil {
		return nil, fmt.Errorf("controller %s: %w", cc.Name, err)
	}
	dev, err := w.hw.device(cc)
	if err != nil {
		return nil, fmt.Errorf("controller %s: %w", cc.Name, err)
	}
	sclk := dev.SCLKHz()
	// The firmware may lower the core clock at run time unless core_freq is
	// pinned: SCLK then drops with it (never above the request).
	sclkLo, sclkHi := dev.SCLKRange()
	m := w.Metrics.AddController(cc.Name, cc.Interface.Name)
	m.SCLKHz.Set(int64(sclk))
	m.SCLKMinHz.Set(int64(sclkLo))
	m.SCLKMaxHz.Set(int64(sclkHi))
	m.Bitrate.Set(int64(bt.Bitrate))
	timing := metrics.BitTiming{BitTiming: bt, OscillatorHz: cc.OscillatorHz, SCLKHz: sclk}
	w.timingInfo = append(w.timingInfo, w.Metrics.AddBitTiming(m, timing))
	w.sources = append(w.sources, statusSource{m: m})
	w.sources[len(w.sources)-1].conf.Store(&sourceConf{timing: timing, restartMs: *cc.RestartMs})
	spi := bridge.NewSPI(dev, m, probe)
	intFd, intr := w.hw.intLine(i, cc)
	// The driver's RX-order bounds need the bus's own time, never revised
	// (mcp2515/rxorder.go): CLOCK_MONOTONIC on a real Pi. On the virtual Pi the
	// owner's clock (hardware.clk) is neither: read between register accesses it
	// holds the current gap's host stalls not yet taken out and lacks its running
	// not yet charged, so it can step back; host time runs slower than the board's
	// while the driver computes, and its bounds excluded the true order of frames
	// now and then (uncounted swaps). The time the hardware has reached
	// (hardware.seen) is exact at each register access and never goes back.
	ctl := mcp2515.New(spi, intr, controllerConfig(cc, bt), w.hw.seenClock().Now)
	sockFd, err := w.socket(i, cc)
	if err != nil {
		return nil, fmt.Errorf("controller %s: %w", cc.Name, err)
	}
	port := bridge.NewPort(bridge.PortConfig{
		Name:        cc.Name,
		Ctl:         ctl,
		SPI:         spi,
		Int:         intr,
		IntFd:       intFd,
		SockFd:      sockFd,
		Metrics:     m,
		ErrorFrames: errorFrames(cc),
		RestartNs:   int64(*cc.RestartMs) * 1e6,
		TxTimeoutNs: int64(cc.TxTimeout.D()),
		PollWindow:  cc.IntPollWindow.D(),
		Clock:       w.hw.clock(),
		Inline:      w.cfg.Realtime.Delivery == config.DeliveryInline,
		Log:         w.log.Warn,
		Info:        w.log.Info,
	})
	w.Owner.Ports = append(w.Owner.Ports, port)
	log := w.log
	return func() error {
		// A chip that does not answer is retried with back-off, its interface
		// served meanwhile (Port.Start logs it): not a reason to stop.
		if port.Start() == nil {
			log.Info("controller ready", "controller", cc.Name, "interface", cc.Interface.Name, "timing", bt.String(),
				"sclk_hz", sclk, "sclk_range_hz", fmt.Sprintf("%d..%d", sclkLo, sclkHi))
		}
		return nil
	}, nil
}

// socket is controller i's CAN socket: the one the caller passed (Options.Sockets),
// or its own (openInterface).
func (w *wiring) socket(i int, cc *config.Controller) (int, error) {
	if w.opt.Sockets != nil && w.opt.Sockets[i] >= 0 {
		return w.opt.Sockets[i], nil
	}
	fd, undo, err := w.openInterface(i, cc)
	if err != nil {
		return -1, err
	}
	w.cleanups = append(w.cleanups, undo)
	return fd, nil
}
