package config

import (
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode"

	"cand/hw/pinout"
	"cand/socketcan/slcan"
)

const (
	gpioMax       = pinout.MaxGPIO // BCM GPIO 0..53, on every supported SoC
	maxRTPrio     = 99
	irqThreadPrio = 50 // the kernel's threaded IRQ handlers run at SCHED_FIFO 50
	maxFilters    = 6
	maxStdID      = 0x7FF
	maxExtID      = 0x1FFFFFFF
)

// checker reports problems at the place of a key path, or of its nearest written
// parent when the key was left out; it stays quiet about values that already
// failed to decode.
type checker struct{ *decoder }

func (v checker) where(path string) pos {
	for {
		if p, ok := v.at[path]; ok {
			return p
		}
		if path == "" {
			return pos{1, 1}
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			path = ""
		} else {
			path = path[:i]
		}
	}
}

func (v checker) fail(path, format string, args ...any) {
	if !v.bad[path] {
		v.errorf(v.where(path), path, format, args...)
	}
}

func (v checker) warn(path, format string, args ...any) {
	v.warnf(v.where(path), path, format, args...)
}

// owner is the controller part of a key path: controllers[1].int_gpio → controllers[1].
func owner(path string) string {
	if i := strings.IndexByte(path, ']'); i >= 0 {
		return path[:i+1]
	}
	return path
}

// firstUse remembers which key path first used a value (an interface name, a pin).
type firstUse map[string]string

// claim records path as a user of key and returns the earlier user, if any.
func (f firstUse) claim(key, path string) (string, bool) {
	if prev, ok := f[key]; ok {
		return prev, true
	}
	f[key] = path
	return "", false
}

func validate(c *Config, d *decoder) {
	v := checker{d}
	v.hardware(&c.Hardware)
	v.realtime(&c.Realtime)
	v.metrics(&c.Metrics)
	v.status(&c.Status)
	if len(c.Controllers) == 0 {
		v.fail("controllers", "at least one controller is required, e.g.\n  controllers:\n    - bitrate: 500000")
		return
	}
	csPins := map[int]string{}  // GPIO → chip_select path
	intPins := map[int]string{} // GPIO → int_gpio path
	ctrlNames, ifNames := names{}, names{}
	for i := range c.Controllers {
		ct := &c.Controllers[i]
		p := fmt.Sprintf("controllers[%d]", i)
		v.controller(c, ct, p)
		v.uniqueNames(ct, p, ctrlNames, ifNames)
		// A chip select that failed to decode is the zero value, not set.
		if cs := ct.SPI.ChipSelect; cs.IsSet() {
			if prev, dup := csPins[cs.Pin()]; dup {
				v.fail(p+".spi.chip_select", "%s (GPIO %d) is used by %s too (line %d); give each controller its own chip select, e.g. chip_select: ce1", cs, cs.Pin(), owner(prev), v.where(prev).line)
			} else {
				csPins[cs.Pin()] = p + ".spi.chip_select"
			}
		}
		if ct.IntGPIO >= 0 && ct.IntGPIO <= gpioMax {
			if prev, dup := intPins[ct.IntGPIO]; dup {
				v.fail(p+".int_gpio", "GPIO %d is used by %s too (line %d); each MCP2515 needs its own INT line", ct.IntGPIO, owner(prev), v.where(prev).line)
			} else {
				intPins[ct.IntGPIO] = p + ".int_gpio"
			}
		}
	}
	for pin, path := range intPins {
		if cs, clash := csPins[pin]; clash {
			v.fail(path, "GPIO %d is the chip select of %s; the INT line needs a pin of its own", pin, owner(cs))
		}
	}
	v.analyzerPins(&c.Hardware.AnalyzerPins, csPins, intPins)
	v.socketcand(c)
}

func (v checker) hardware(h *Hardware) {
	if h.CoreClockHz != 0 && (h.CoreClockHz < 100_000_000 || h.CoreClockHz > 1_000_000_000) {
		v.fail("hardware.core_clock_hz", "%d is not allowed: give the VPU core clock in Hz, 100000000..1000000000 (e.g. 250000000 with core_freq=250), or 0 for the board's highest", h.CoreClockHz)
	}
	v.duration("hardware.poll_budget", h.PollBudget, time.Second)
	if !strings.HasPrefix(h.GPIOChip, "/") {
		v.fail("hardware.gpio_chip", "%q is not a device path; write e.g. %s", h.GPIOChip, DefaultGPIOChip)
	}
	if v.has("hardware.sim_cpu") && h.Backend != BackendSim {
		v.warn("hardware.sim_cpu", "ignored: the %s backend runs on the real CPU", h.Backend)
	}
	for _, key := range []string{"hardware.sim_board", "hardware.sim_force_turbo", "hardware.sim_kernel_cost", "hardware.sim_host_noise", "hardware.sim_stall_bus_after"} {
		if v.has(key) && h.Backend != BackendSim {
			v.warn(key, "ignored: the %s backend runs on the board it finds", h.Backend)
		}
	}
	if v.has("hardware.hold_cpu_clock") && h.HoldCPUClock && h.Backend == BackendSim && h.SimCPU != SimCPUStrict {
		v.warn("hardware.hold_cpu_clock", "has no effect with sim_cpu %s: only the strict rule plays the board's clocks (docs/boards.md)", h.SimCPU)
	}
	if h.SimStallBusAfter < 0 {
		v.fail("hardware.sim_stall_bus_after", "%s is not allowed: must not be negative; 0 means never", h.SimStallBusAfter.D())
	}
}

func (v checker) analyzerPins(a *AnalyzerPins, csPins, intPins map[int]string) {
	used := firstUse{}
	for _, p := range []struct {
		pin  int
		path string
	}{{a.Interrupt, "hardware.analyzer_pins.interrupt"}, {a.SPI, "hardware.analyzer_pins.spi"}, {a.SocketWrite, "hardware.analyzer_pins.socket_write"}} {
		switch {
		case p.pin == -1:
			continue
		case p.pin < 0 || p.pin > gpioMax:
			v.fail(p.path, "%d is not allowed: a BCM GPIO 0..%d, or -1 for off", p.pin, gpioMax)
			continue
		case pinout.IsSPI0DataPin(p.pin):
			v.fail(p.path, "GPIO %d is an SPI0 data pin (%s); pick another GPIO", p.pin, pinout.SPI0DataPins())
			continue
		}
		if cs, clash := csPins[p.pin]; clash {
			v.fail(p.path, "GPIO %d is the chip select of %s; pick another GPIO", p.pin, owner(cs))
		} else if in, clash := intPins[p.pin]; clash {
			v.fail(p.path, "GPIO %d is the INT line of %s; pick another GPIO", p.pin, owner(in))
		} else if prev, dup := used.claim(strconv.Itoa(p.pin), p.path); dup {
			v.fail(p.path, "GPIO %d is used by %s too; give each analyzer pin its own GPIO", p.pin, prev)
		}
	}
}

func (v checker) realtime(r *Realtime) {
	switch {
	case r.Priority < 0 || r.Priority > maxRTPrio:
		v.fail("realtime.priority", "%d is not allowed: SCHED_FIFO priority 1..99, or 0 for normal scheduling", r.Priority)
	case r.Priority >= irqThreadPrio:
		v.warn("realtime.priority", "%d is not below the kernel's IRQ threads (%d): the owner thread can starve the GPIO interrupt thread that wakes it; %d is the default", r.Priority, irqThreadPrio, DefaultPriority)
	}
	if r.CPU < -1 || r.CPU > 1023 {
		v.fail("realtime.cpu", "%d is not allowed: a CPU number 0..1023, or -1 for no pinning", r.CPU)
	}
	if r.DeliveryCPU < -1 || r.DeliveryCPU > 1023 {
		v.fail("realtime.delivery_cpu", "%d is not allowed: a CPU number 0..1023, or -1 for no pinning", r.DeliveryCPU)
	} else if r.DeliveryCPU >= 0 && r.DeliveryCPU == r.CPU {
		v.warn("realtime.delivery_cpu", "CPU %d is realtime.cpu too: the delivery thread then takes the owner thread's core, which it exists to spare; pin it to another CPU", r.DeliveryCPU)
	}
}

func (v checker) metrics(m *Metrics) {
	if m.MaxConnections < 1 || m.MaxConnections > 1024 {
		v.fail("metrics.max_connections", "%d is not allowed: 1..1024 open connections (default %d)", m.MaxConnections, DefaultMetricsMaxConnections)
	}
	v.timeout("metrics.read_timeout", m.ReadTimeout, 5*time.Minute, "a client that never finishes its request would hold a connection for good")
	v.timeout("metrics.write_timeout", m.WriteTimeout, 5*time.Minute, "a client that never reads its answer would hold a connection for good")
	v.timeout("metrics.idle_timeout", m.IdleTimeout, time.Hour, "idle keep-alive connections would hold their places for good")
	if *m.Listen == "" {
		if m.WebConfig != "" {
			v.warn("metrics.web_config", "ignored: the metrics endpoint is off (listen: \"\")")
		}
		return
	}
	_, port, err := net.SplitHostPort(*m.Listen)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || n < 1 || n > 65535 {
		v.fail("metrics.listen", "%q is not host:port; write e.g. %s or :9108, or \"\" to turn metrics off", *m.Listen, DefaultMetrics)
	}
}

// sunPathMax is the longest unix socket path: sun_path's 108 bytes less the
// terminating NUL (linux/un.h).
const sunPathMax = 107

func (v checker) status(s *Status) {
	switch p := *s.Socket; {
	case p == "":
	case !strings.HasPrefix(p, "/"):
		v.fail("status.socket", "%q is not an absolute path; write e.g. %s, or \"\" to turn the status socket off", p, DefaultStatusSocket)
	case len(p) > sunPathMax:
		v.fail("status.socket", "%d characters: a unix socket path has at most %d", len(p), sunPathMax)
	}
	if strings.ContainsFunc(s.Group, func(r rune) bool { return r == ':' || r == '/' || unicode.IsSpace(r) }) {
		v.fail("status.group", "%q is not a group name: it may not contain ':', '/' or white space", s.Group)
	}
}

// timeout checks a timeout that must be set, 1ms..most: 0 would mean none, and why
// says what that would allow.
func (v checker) timeout(path string, d Duration, most time.Duration, why string) {
	switch {
	case d <= 0:
		v.fail(path, "%s is not allowed: without a timeout %s; give 1ms..%s", d.D(), why, most)
	case d.D() < time.Millisecond || d.D() > most:
		v.fail(path, "%s is not allowed: 1ms..%s", d.D(), most)
	}
}

func (v checker) controller(c *Config, ct *Controller, p string) {
	v.controllerName(ct, p)
	v.spi(&ct.SPI, p+".spi")
	switch {
	case ct.IntGPIO < 0 || ct.IntGPIO > gpioMax:
		v.fail(p+".int_gpio", "%d is not allowed: a BCM GPIO 0..%d (PiCAN2 and Waveshare boards use 25)", ct.IntGPIO, gpioMax)
	case pinout.IsSPI0DataPin(ct.IntGPIO):
		v.fail(p+".int_gpio", "GPIO %d is an SPI0 data pin (%s); give the GPIO the MCP2515's INT is wired to", ct.IntGPIO, pinout.SPI0DataPins())
	}
	v.duration(p+".int_poll_window", ct.IntPollWindow, time.Second)
	v.duration(p+".int_debounce", ct.IntDebounce, time.Second)
	oscOK := ct.OscillatorHz >= 1_000_000 && ct.OscillatorHz <= 25_000_000
	if !oscOK {
		v.fail(p+".oscillator_hz", "%d is not allowed: the MCP2515's crystal is 1000000..25000000 Hz (read it off the can: 8, 12, 16 or 20 MHz)", ct.OscillatorHz)
	}
	v.bitTiming(ct, p, oscOK && !v.bad[p+".oscillator_hz"])
	if ct.TxTimeout < 0 {
		v.fail(p+".tx_timeout", "%s is not allowed: must not be negative; 0 means never", ct.TxTimeout.D())
	}
	if ct.Filters != nil {
		v.filters(ct.Filters, p+".filters")
	}
	v.iface(&ct.Interface, p+".interface")
	if ct.Interface.Kind == KindSLCAN {
		v.slcanBitrate(ct, p)
	}
	if len(ct.Sim.Peers) > 0 && c.Hardware.Backend != BackendSim {
		v.warn(p+".sim.peers", "ignored: the %s backend talks to a real bus", c.Hardware.Backend)
	}
	if ct.Sim.ChipAbsent && c.Hardware.Backend != BackendSim {
		v.warn(p+".sim.chip_absent", "ignored: the %s backend talks to the chip that is fitted", c.Hardware.Backend)
	}
	for i := range ct.Sim.Peers {
		v.peer(&ct.Sim.Peers[i], fmt.Sprintf("%s.sim.peers[%d]", p, i))
	}
	v.uniquePeerNames(ct.Sim.Peers, p)
}

func (v checker) spi(s *SPI, p string) {
	if s.ClockHz < 1_000 || s.ClockHz > 10_000_000 {
		v.fail(p+".clock_hz", "%d is not allowed: the MCP2515's SPI runs at 1000..10000000 Hz (10 MHz is its datasheet maximum)", s.ClockHz)
	}
	switch s.Mode {
	case 0, 3:
	case 1, 2:
		v.fail(p+".mode", "SPI mode %d is not allowed: the MCP2515 supports only modes 0 and 3; use 0", s.Mode)
	default:
		v.fail(p+".mode", "%d is out of range: SPI modes are 0..3, and the MCP2515 supports only 0 and 3", s.Mode)
	}
	if s.CSActiveHigh {
		v.warn(p+".cs_active_high", "the MCP2515's chip select is active-low; keep this only if your board inverts the line")
	}
}

func (v checker) duration(path string, d Duration, most time.Duration) {
	if d < 0 || d.D() > most {
		v.fail(path, "%s is not allowed: 0..%s", d.D(), most)
	}
}

func (v checker) filters(f *Filters, p string) {
	v.canID(p+".mask0.id", f.Mask0.ID, f.Mask0.Extended)
	v.canID(p+".mask1.id", f.Mask1.ID, f.Mask1.Extended)
	if n := len(f.Filters); n > maxFilters {
		v.fail(p+".filters", "%d filters given: the MCP2515 has %d (RXF0..RXF5); drop %d", n, maxFilters, n-maxFilters)
	}
	for i, flt := range f.Filters {
		v.canID(fmt.Sprintf("%s.filters[%d].id", p, i), flt.ID, flt.Extended)
	}
}

func (v checker) canID(path string, id uint32, extended bool) {
	switch {
	case extended && id > maxExtID:
		v.fail(path, "0x%X is not a 29-bit ID: allowed 0..0x1FFFFFFF", id)
	case !extended && id > maxStdID:
		v.fail(path, "0x%X is not an 11-bit standard ID: allowed 0..0x7FF; set extended: true for a 29-bit ID", id)
	}
}

func (v checker) iface(in *Interface, p string) {
	if why := ifNameProblem(in.Name); why != "" {
		v.fail(p+".name", "%s is not a valid interface name: %s", quote(in.Name), why)
	}
	switch {
	case in.Kind != KindVXCAN && in.Peer != "":
		v.fail(p+".peer", "only a vxcan pair has a peer; remove peer or set kind: vxcan")
	case in.Kind == KindVXCAN:
		if why := ifNameProblem(in.Peer); why != "" {
			v.fail(p+".peer", "%s is not a valid interface name: %s", quote(in.Peer), why)
		} else if in.Peer == in.Name {
			v.fail(p+".peer", "%s is the interface's own name; the two ends of a vxcan pair need different names", quote(in.Peer))
		}
	}
	if !in.NetNS.IsZero() && in.Kind != KindVXCAN {
		v.fail(p+".netns", "only a vxcan pair can reach another network namespace: its applications' end (interface.name) is created there; remove netns or set kind: vxcan")
	}
	if in.RemoveOnExit && in.Kind == KindNone {
		v.warn(p+".remove_on_exit", "ignored: with kind none there is no interface to remove")
	}
	if in.Kind == KindSLCAN && in.RemoveOnExit {
		v.warn(p+".remove_on_exit", "ignored: a slcan interface always goes when cand stops (it lives as long as cand holds its pseudo-terminal)")
	}
	if in.Kind == KindSLCAN && in.OnDelete == OnDeleteExit {
		v.warn(p+".on_delete", "ignored: a slcan interface cannot be deleted while cand holds it")
	}
	if in.RcvBuf < 4096 || in.RcvBuf > 1<<30 {
		v.fail(p+".rcvbuf", "%d is not allowed: the socket receive buffer is 4096..1073741824 bytes (default %d)", in.RcvBuf, DefaultRcvBuf)
	}
}

func (v checker) peer(sp *SimPeer, p string) {
	v.peerName(sp, p)
	if !v.has(p + ".kind") {
		v.fail(p+".kind", "required; allowed: %s", strings.Join(SimPeerKind("").choices(), ", "))
		return
	}
	sends := sp.Kind == PeerPeriodic || sp.Kind == PeerLoad
	if sends && len(sp.IDs) == 0 {
		v.fail(p+".ids", "a %s peer needs at least one ID, e.g. ids: [0x100]", sp.Kind)
	}
	switch {
	case sp.Kind == PeerAnswer && v.has(p+".ids"):
		v.fail(p+".ids", "an %s peer sends no IDs of its own (it answers with ID + id_offset); remove ids", sp.Kind)
	case !sends && v.has(p+".ids"):
		v.fail(p+".ids", "an %s peer sends no frames of its own (it destroys other nodes' frames); remove ids", sp.Kind)
	}
	for i, id := range sp.IDs {
		v.canID(fmt.Sprintf("%s.ids[%d]", p, i), id, sp.Extended)
	}
	if (sp.Kind == PeerPeriodic || sp.Kind == PeerErrors) && sp.Period <= 0 {
		who := "a periodic peer"
		if sp.Kind == PeerErrors {
			who = "an errors peer"
		}
		v.fail(p+".period", "%s is not allowed: %s needs a period above 0, e.g. 100ms", sp.Period.D(), who)
	}
	if *sp.DLC > 8 {
		v.fail(p+".dlc", "%d is not allowed: a classic CAN frame carries 0..8 bytes", *sp.DLC)
	}
	v.peerFrames(sp, p, sends)
	if sp.Kind != PeerAnswer && v.has(p+".id_offset") {
		v.fail(p+".id_offset", "applies only to answer peers; remove it")
	}
	switch {
	case sp.Kind != PeerLoad && v.has(p+".load_percent"):
		v.fail(p+".load_percent", "applies only to load peers; remove it")
	case sp.Kind == PeerLoad && !v.has(p+".load_percent"):
		v.fail(p+".load_percent", "required for a load peer: its share of bus time, 1..100")
	case sp.Kind == PeerLoad && (sp.LoadPercent < 1 || sp.LoadPercent > 100):
		v.fail(p+".load_percent", "%s is not allowed: a share of bus time, 1..100", fmtFloat(sp.LoadPercent))
	}
}

// peerFrames checks the keys that shape a sending peer's frames.
func (v checker) peerFrames(sp *SimPeer, p string, sends bool) {
	if !sends {
		for _, k := range []string{"dlcs", "remote", "payload"} {
			if v.has(p + "." + k) {
				v.fail(p+"."+k, "applies only to periodic and load peers, which send frames of their own; remove it")
			}
		}
		return
	}
	switch {
	case len(sp.DLCs) > 0 && v.has(p+".dlc"):
		v.fail(p+".dlcs", "give either dlc (every frame) or dlcs (one per id), not both")
	case v.has(p+".dlcs") && len(sp.DLCs) != len(sp.IDs):
		v.fail(p+".dlcs", "%d data lengths for %d ids: give one per id, in the order of ids", len(sp.DLCs), len(sp.IDs))
	}
	for i, d := range sp.DLCs {
		if d > 8 {
			v.fail(fmt.Sprintf("%s.dlcs[%d]", p, i), "%d is not allowed: a classic CAN frame carries 0..8 bytes", d)
		}
	}
	if sp.Remote && sp.Payload != "" && sp.Payload != PayloadCounter {
		v.fail(p+".payload", "%s with remote: true: remote frames carry no data; remove one of them", sp.Payload)
	}
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// perMilleOf turns a sample point fraction into the kernel's per mille.
func perMilleOf(sp float64) uint32 { return uint32(math.Round(sp * 1000)) }

// slcanBitrate: a slcan netdev takes only the kernel's fixed bitrates
// (slcan_bitrate_const in drivers/net/can/slcan/slcan-core.c), and cand sets
// the configured one on it at start, so the configuration must name one of them.
func (v checker) slcanBitrate(ct *Controller, p string) {
	rate := ct.Bitrate
	if ct.Timing != nil {
		bt, err := ct.BitTiming()
		if err != nil {
			return // reported by bitTiming
		}
		rate = bt.Bitrate
	}
	if rate == 0 || v.bad[p+".bitrate"] {
		return
	}
	if _, ok := slcan.BitrateIndex(rate); !ok {
		var list []string
		for _, r := range slcan.Bitrates {
			list = append(list, strconv.FormatUint(uint64(r), 10))
		}
		v.fail(p+".bitrate", "%d is not a bitrate a slcan interface can have: the kernel's slcan takes only %s; choose one of them, or use kind vcan or vxcan", rate, strings.Join(list, ", "))
	}
}
