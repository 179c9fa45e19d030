package daemon

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"cand/bridge"
	"cand/config"
	"cand/internal/mono"
	"cand/internal/sdnotify"
	"cand/mcp2515"
	"cand/metrics"
)

// reloadClass is what a reload can do with a changed key: the schema's `reload`
// tag (config.Config); a key without one needs a restart of cand (the chip
// select, the INT line, the interface, the simulated bus...).
type reloadClass int

const (
	reloadRestart  reloadClass = iota // cand must be restarted
	reloadSettings                    // "settings": the owner thread takes it between two turns
	// reloadChip, "chip": the controller is restarted with it. Bit timing, mode,
	// masks and filters can only be written in Configuration mode (MCP2515
	// datasheet DS20001801J §10.1), and a kernel CAN driver takes a new bitrate
	// only with its link down (drivers/net/can/dev/netlink.c refuses it on a
	// running device).
	reloadChip
	reloadEndpoint // "endpoint": the metrics endpoint is served anew
)

// reloadClassOf is what a reload does with schema field f, from its `reload`
// tag; ok is false for a value this file does not know (TestReloadTags refuses
// it), which counts as a restart.
func reloadClassOf(f reflect.StructField) (c reloadClass, ok bool) {
	switch f.Tag.Get("reload") {
	case "":
		return reloadRestart, true
	case "settings":
		return reloadSettings, true
	case "chip":
		return reloadChip, true
	case "endpoint":
		return reloadEndpoint, true
	}
	return reloadRestart, false
}

// ReloadResult says what a reload did.
type ReloadResult struct {
	// Applied are the keys that took effect, e.g. "controllers[0].filters".
	Applied []string
	// NeedRestart are the keys that changed but take effect only when cand is
	// restarted, e.g. "controllers[0].spi".
	NeedRestart []string
}

// reloader is a reload's state: one at a time, against the configuration running.
type reloader struct {
	mu  sync.Mutex
	cur *config.Config // the start's configuration with what reloads applied; nil: w.cfg
}

// Reload reads the configuration file again (Options.ConfigPath) and applies what
// changed while cand bridges: error_frames, restart_ms, tx_timeout and
// int_poll_window at once, through the owner thread; bit timing, mode and filters
// by restarting the controller with them; the metrics section by serving the
// endpoint anew. What needs a restart of cand is logged and listed, and left as
// it was. An invalid file changes nothing: the error says why. systemctl reload
// (SIGHUP) calls it.
func (d *Daemon) Reload() (ReloadResult, error) {
	if d.reload == nil {
		return ReloadResult{}, errors.New("reload: cand is not running")
	}
	return d.reload()
}

// reloadConfig is Reload for this run.
func (w *wiring) reloadConfig() (ReloadResult, error) {
	r := &w.reloading
	r.mu.Lock()
	defer r.mu.Unlock()
	if w.opt.ConfigPath == "" {
		return ReloadResult{}, errors.New("reload: no configuration file to read again (Options.ConfigPath)")
	}
	n := sdnotify.FromEnv()
	n.Send(fmt.Sprintf("RELOADING=1\nMONOTONIC_USEC=%d", mono.Now()/1000))
	defer func() {
		if w.sd != nil {
			w.sd.ready()
		} else {
			n.Send("READY=1")
		}
	}()
	next, err := config.Load(w.opt.ConfigPath)
	if err != nil {
		w.log.Error("reload: configuration refused, nothing changed", "config", w.opt.ConfigPath, "err", err)
		return ReloadResult{}, err
	}
	for _, warn := range next.Warnings {
		w.log.Warn(warn, "config", w.opt.ConfigPath)
	}
	cur := r.cur
	if cur == nil {
		cur = w.cfg
	}
	p := planReload(cur, next)
	res, err := w.applyPlan(p)
	if err != nil {
		return res, err
	}
	r.cur = p.running
	for _, k := range res.NeedRestart {
		w.log.Warn("reload: changed, but takes effect only when cand is restarted", "key", k)
	}
	if len(res.Applied)+len(res.NeedRestart) == 0 {
		w.log.Info("reload: nothing changed", "config", w.opt.ConfigPath)
	}
	return res, nil
}

// reloadPlan is what next changes in the running configuration.
type reloadPlan struct {
	cur     *config.Config
	ports   []portChange
	metrics *config.Metrics // nil: unchanged
	restart []string
	// running is what runs once the plan is applied: the running configuration
	// with the live changes made (those that need a restart left as they were).
	running *config.Config
}

// portChange is one controller's live changes.
type portChange struct {
	i        int
	cc       *config.Controller // the new controller section
	keys     []string           // the keys that changed, as ReloadResult lists them
	settings bool               // bridge.Settings changed
	chip     bool               // the chip's configuration changed
}

// planReload compares next with cur. Controllers are matched by name; one added
// or removed needs a restart.
func planReload(cur, next *config.Config) *reloadPlan {
	p := &reloadPlan{cur: cur}
	run := *cur
	run.Controllers = append([]config.Controller(nil), cur.Controllers...)
	top := reflect.TypeFor[config.Config]()
	for i := range top.NumField() {
		f := top.Field(i)
		key := yamlKey(f)
		if key == "" || key == "controllers" {
			continue
		}
		if reflect.DeepEqual(reflect.ValueOf(*cur).Field(i).Interface(), reflect.ValueOf(*next).Field(i).Interface()) {
			continue
		}
		if c, _ := reloadClassOf(f); c == reloadEndpoint {
			p.metrics, run.Metrics = &next.Metrics, next.Metrics
			continue
		}
		p.restart = append(p.restart, key)
	}
	byName := map[string]int{}
	for i := range cur.Controllers {
		byName[cur.Controllers[i].Name] = i
	}
	seen := map[string]bool{}
	for j := range next.Controllers {
		nc := &next.Controllers[j]
		seen[nc.Name] = true
		i, ok := byName[nc.Name]
		if !ok {
			p.restart = append(p.restart, fmt.Sprintf("controllers[%d] (%s, added)", j, nc.Name))
			continue
		}
		if pc, ok := planController(i, &cur.Controllers[i], nc, &run.Controllers[i], p); ok {
			p.ports = append(p.ports, pc)
		}
	}
	for i := range cur.Controllers {
		if name := cur.Controllers[i].Name; !seen[name] {
			p.restart = append(p.restart, fmt.Sprintf("controllers[%d] (%s, removed)", i, name))
		}
	}
	p.running = &run
	return p
}

// planController compares one controller's sections, field by field, and copies
// the live changes into run.
func planController(i int, cc, nc, run *config.Controller, p *reloadPlan) (portChange, bool) {
	pc := portChange{i: i, cc: nc}
	t := reflect.TypeFor[config.Controller]()
	cv, nv, rv := reflect.ValueOf(cc).Elem(), reflect.ValueOf(nc).Elem(), reflect.ValueOf(run).Elem()
	for f := range t.NumField() {
		key := yamlKey(t.Field(f))
		if key == "" || reflect.DeepEqual(cv.Field(f).Interface(), nv.Field(f).Interface()) {
			continue
		}
		path := fmt.Sprintf("controllers[%d].%s", i, key)
		switch c, _ := reloadClassOf(t.Field(f)); c {
		case reloadSettings:
			pc.settings = true
		case reloadChip:
			pc.chip = true
		default:
			p.restart = append(p.restart, path)
			continue
		}
		pc.keys = append(pc.keys, path)
		rv.Field(f).Set(nv.Field(f))
	}
	return pc, len(pc.keys) > 0
}

// yamlKey is a schema field's key; "" for one not read from the file.
func yamlKey(f reflect.StructField) string {
	k, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if k == "-" {
		return ""
	}
	return k
}

// applyPlan makes the plan's live changes: the ports' through the owner thread
// (one request for all of them), then the metrics endpoint.
func (w *wiring) applyPlan(p *reloadPlan) (ReloadResult, error) {
	res := ReloadResult{NeedRestart: p.restart}
	type chipChange struct {
		cfg  mcp2515.Config
		bt   mcp2515.BitTiming
		now  bool   // programmed at once (else when the controller next starts)
		from string // where the bitrate came from (sourceConf.bitrateFrom)
	}
	chips := make([]*chipChange, len(p.ports))
	for k, pc := range p.ports {
		if !pc.chip {
			continue
		}
		cc, from := w.slcanRate(pc.i, pc.cc)
		bt, err := Timing(cc)
		if err != nil {
			return res, fmt.Errorf("reload: controller %s: %w", pc.cc.Name, err)
		}
		chips[k] = &chipChange{cfg: controllerConfig(cc, bt), bt: bt, from: from}
	}
	ran := w.Owner.Apply(func() {
		for k, pc := range p.ports {
			port := w.Owner.Ports[pc.i]
			if pc.settings {
				port.SetSettings(portSettings(pc.cc))
			}
			if c := chips[k]; c != nil {
				c.now = port.Reprogram(c.cfg)
			}
		}
	})
	if !ran {
		return res, errors.New("reload: cand is not bridging (starting or stopping); nothing changed")
	}
	for k, pc := range p.ports {
		res.Applied = append(res.Applied, pc.keys...)
		m := w.Owner.Ports[pc.i].M
		c := chips[k]
		if c == nil {
			old := w.sources[pc.i].conf.Load()
			w.sources[pc.i].conf.Store(&sourceConf{timing: old.timing, restartMs: *pc.cc.RestartMs, bitrateFrom: old.bitrateFrom})
			w.log.Info("reload: applied", "controller", pc.cc.Name, "keys", strings.Join(pc.keys, ","))
			continue
		}
		timing := metrics.BitTiming{BitTiming: c.bt, OscillatorHz: pc.cc.OscillatorHz, SCLKHz: uint32(m.SCLKHz.Load())}
		m.Bitrate.Set(int64(c.bt.Bitrate))
		w.timingInfo[pc.i].Set(timing)
		w.sources[pc.i].conf.Store(&sourceConf{timing: timing, restartMs: *pc.cc.RestartMs, bitrateFrom: c.from})
		msg := "reload: controller restarted with its new configuration"
		if !c.now {
			msg = "reload: applied; the controller is off the bus and takes its new configuration when it starts again"
		}
		w.log.Info(msg, "controller", pc.cc.Name, "keys", strings.Join(pc.keys, ","), "timing", c.bt.String())
	}
	if p.metrics != nil {
		if err := w.reloadMetrics(&p.cur.Metrics, p.metrics); err != nil {
			// The next reload tries again.
			p.running.Metrics = p.cur.Metrics
			w.log.Error("reload: metrics endpoint not changed", "err", err)
			return res, fmt.Errorf("reload: %w", err)
		}
		res.Applied = append(res.Applied, "metrics")
	}
	return res, nil
}

// portSettings are the bridge's live settings of controller cc.
func portSettings(cc *config.Controller) bridge.Settings {
	return bridge.Settings{
		ErrorFrames: errorFrames(cc),
		RestartNs:   int64(*cc.RestartMs) * int64(time.Millisecond),
		TxTimeoutNs: int64(cc.TxTimeout.D()),
		PollWindow:  cc.IntPollWindow.D(),
	}
}

// reloadMetrics serves the metrics endpoint anew with m instead of old: the new
// server is built (metrics.web_config read and checked) before the old one
// closes, and a new address is listened on first, so that an error leaves the
// old endpoint serving; on the same address the old one closes first, and if the
// address cannot be listened on again the endpoint is off.
func (w *wiring) reloadMetrics(old, m *config.Metrics) error {
	if w.opt.MetricsListener != nil {
		return errors.New("metrics: served on a listener cand was given (Options.MetricsListener), which a reload cannot replace")
	}
	srv, err := w.metricsServer(m)
	if err != nil {
		return err
	}
	if srv == nil { // listen: ""
		w.closeMetrics()
		w.log.Info("reload: metrics endpoint off")
		return nil
	}
	if *m.Listen == *old.Listen {
		w.closeMetrics()
	}
	l, err := listenMetrics(*m.Listen)
	if err != nil {
		return err
	}
	w.closeMetrics()
	w.startMetrics(srv, l, m.MaxConnections)
	w.log.Info("reload: metrics endpoint serving anew", "addr", w.MetricsAddr, "web_config", m.WebConfig != "")
	return nil
}

// errorFrames is whether the owner writes error frames to the controller's
// socket: as configured, and always for a slcan interface, whose adapter turns
// them into the state and error lines the kernel's slcan reports (applications
// get the kernel's own error frames only with CAN_RAW_ERR_FILTER, as from any
// CAN driver).
func errorFrames(cc *config.Controller) bool {
	return *cc.ErrorFrames || cc.Interface.Kind == config.KindSLCAN
}
