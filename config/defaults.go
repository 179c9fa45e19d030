package config

import (
	"fmt"
	"strconv"
	"time"

	"cand/hw/pinout"
)

// Defaults of the optional settings (documented on the schema).
const (
	DefaultPollBudget   = Duration(20 * time.Microsecond)
	DefaultGPIOChip     = "/dev/gpiochip0"
	DefaultPriority     = 40
	DefaultMetrics      = "127.0.0.1:9108"
	DefaultStatusSocket = "/run/cand/status.sock"
	DefaultSPIClockHz   = 10_000_000
	DefaultChipSelect   = pinout.CE0
	DefaultIntGPIO      = 25
	DefaultOscillatorHz = 16_000_000
	DefaultRestartMs    = 100
	DefaultTxTimeout    = Duration(time.Second)
	// DefaultIntPollWindow keeps the INT poll window on: under full RX load at
	// 1 Mbit/s the virtual Pi 3 and Pi 4 lost less with it than without in most
	// runs (docs/clock.md, "Lossless defaults"), and the owner loop's bound
	// (bridge.PollsPerTurn, bridge.WindowRearms) keeps every other duty served.
	DefaultIntPollWindow = Duration(500 * time.Microsecond)
	DefaultRcvBuf        = 4 << 20
	DefaultPeerPeriod    = Duration(100 * time.Millisecond)
	DefaultPeerDLC       = 8
	DefaultPeerIDOffset  = 1
)

// Defaults of the metrics endpoint's limits (docs/security.md).
const (
	DefaultMetricsMaxConnections = 8
	DefaultMetricsReadTimeout    = Duration(5 * time.Second)
	DefaultMetricsWriteTimeout   = Duration(10 * time.Second)
	DefaultMetricsIdleTimeout    = Duration(30 * time.Second)
)

func (d *decoder) has(path string) bool {
	_, ok := d.at[path]
	return ok
}

// applyDefaults fills every setting the file left out. Presence is taken from the
// decoder, so an explicit 0 (a valid GPIO, CPU or priority) is kept.
func applyDefaults(c *Config, d *decoder) {
	h := &c.Hardware
	if !d.has("hardware.backend") {
		h.Backend = BackendSim
	}
	if !d.has("hardware.sim_cpu") {
		// The strict rule: only the host's scheduler and hypervisor leave the
		// board's time, so what the virtual Pi shows holds for a Pi. The driver
		// reads its deadlines and latencies in the board's time (daemon/hardware.go),
		// so they mean the same spans on the virtual Pi as on a real one
		// (docs/clock.md).
		h.SimCPU = SimCPUStrict
	}
	if !d.has("hardware.sim_board") {
		h.SimBoard = SimBoardPi3
	}
	if !d.has("hardware.poll_budget") {
		h.PollBudget = DefaultPollBudget
	}
	if !d.has("hardware.gpio_chip") {
		h.GPIOChip = DefaultGPIOChip
	}
	for path, pin := range map[string]*int{
		"hardware.analyzer_pins.interrupt":    &h.AnalyzerPins.Interrupt,
		"hardware.analyzer_pins.spi":          &h.AnalyzerPins.SPI,
		"hardware.analyzer_pins.socket_write": &h.AnalyzerPins.SocketWrite,
	} {
		if !d.has(path) {
			*pin = -1
		}
	}
	if !d.has("realtime.priority") {
		c.Realtime.Priority = DefaultPriority
	}
	if !d.has("realtime.cpu") {
		c.Realtime.CPU = -1
	}
	if c.Realtime.Mlockall == nil {
		c.Realtime.Mlockall = ptr(true)
	}
	metricsDefaults(&c.Metrics, d)
	if c.Status.Socket == nil {
		c.Status.Socket = ptr(DefaultStatusSocket)
	}
	socketcandDefaults(&c.Socketcand, d)
	for i := range c.Controllers {
		controllerDefaults(&c.Controllers[i], fmt.Sprintf("controllers[%d]", i), d)
	}
	defaultInterfaceNames(c, d)
}

func metricsDefaults(m *Metrics, d *decoder) {
	if m.Listen == nil {
		m.Listen = ptr(DefaultMetrics)
	}
	if !d.has("metrics.max_connections") {
		m.MaxConnections = DefaultMetricsMaxConnections
	}
	if !d.has("metrics.read_timeout") {
		m.ReadTimeout = DefaultMetricsReadTimeout
	}
	if !d.has("metrics.write_timeout") {
		m.WriteTimeout = DefaultMetricsWriteTimeout
	}
	if !d.has("metrics.idle_timeout") {
		m.IdleTimeout = DefaultMetricsIdleTimeout
	}
}

func controllerDefaults(ct *Controller, p string, d *decoder) {
	if !d.has(p + ".spi.clock_hz") {
		ct.SPI.ClockHz = DefaultSPIClockHz
	}
	if !d.has(p + ".spi.chip_select") {
		ct.SPI.ChipSelect = DefaultChipSelect
	}
	if !d.has(p + ".int_gpio") {
		ct.IntGPIO = DefaultIntGPIO
	}
	if !d.has(p + ".oscillator_hz") {
		ct.OscillatorHz = DefaultOscillatorHz
	}
	if !d.has(p + ".mode") {
		ct.Mode = ModeNormal
	}
	if ct.ErrorFrames == nil {
		ct.ErrorFrames = ptr(true)
	}
	if ct.RestartMs == nil {
		ct.RestartMs = ptr(uint32(DefaultRestartMs))
	}
	if !d.has(p + ".tx_timeout") {
		ct.TxTimeout = DefaultTxTimeout
	}
	if !d.has(p + ".int_poll_window") {
		ct.IntPollWindow = DefaultIntPollWindow
	}
	if ct.Filters != nil && ct.Filters.Rollover == nil {
		ct.Filters.Rollover = ptr(true)
	}
	if ct.Timing != nil && ct.Timing.CNF1 == nil && !d.has(p+".timing.sjw") {
		ct.Timing.SJW = 1
	}
	if !d.has(p + ".interface.kind") {
		ct.Interface.Kind = KindVCAN
	}
	if !d.has(p + ".interface.rcvbuf") {
		ct.Interface.RcvBuf = DefaultRcvBuf
	}
	if !d.has(p + ".interface.on_delete") {
		ct.Interface.OnDelete = OnDeleteRecreate
	}
	for i := range ct.Sim.Peers {
		peer := &ct.Sim.Peers[i]
		pp := fmt.Sprintf("%s.sim.peers[%d]", p, i)
		if !d.has(pp + ".name") {
			peer.Name = string(peer.Kind) + strconv.Itoa(i)
		}
		if !d.has(pp + ".period") {
			peer.Period = DefaultPeerPeriod
		}
		if peer.DLC == nil {
			peer.DLC = ptr(uint8(DefaultPeerDLC))
		}
		if !d.has(pp + ".id_offset") {
			peer.IDOffset = DefaultPeerIDOffset
		}
	}
}

// defaultInterfaceNames gives each controller without an interface name the lowest
// free can<N> (vcan<N> on the sim backend), skipping names other controllers chose
// for an interface or a vxcan peer (and, for a vxcan pair whose peer is left out,
// names whose peer can<N>p is taken), then fills the names and vxcan peers that
// derive from it.
func defaultInterfaceNames(c *Config, d *decoder) {
	prefix := "can"
	if c.Hardware.Backend == BackendSim {
		prefix = "vcan"
	}
	used := map[string]bool{}
	for i, ct := range c.Controllers {
		p := fmt.Sprintf("controllers[%d].interface", i)
		if d.has(p + ".name") {
			used[ct.Interface.Name] = true
		}
		if d.has(p + ".peer") {
			used[ct.Interface.Peer] = true
		}
	}
	next := 0 // every lower number is taken
	for i := range c.Controllers {
		ct := &c.Controllers[i]
		p := fmt.Sprintf("controllers[%d]", i)
		if !d.has(p + ".interface.name") {
			for used[prefix+strconv.Itoa(next)] {
				next++
			}
			n := next
			derivedPeer := ct.Interface.Kind == KindVXCAN && !d.has(p+".interface.peer")
			for derivedPeer && (used[prefix+strconv.Itoa(n)] || used[prefix+strconv.Itoa(n)+"p"]) {
				n++
			}
			ct.Interface.Name = prefix + strconv.Itoa(n)
			used[ct.Interface.Name] = true
		}
		if !d.has(p + ".name") {
			ct.Name = ct.Interface.Name
		}
		if ct.Interface.Kind == KindVXCAN && !d.has(p+".interface.peer") {
			ct.Interface.Peer = ct.Interface.Name + "p"
		}
	}
}

func ptr[T any](v T) *T { return &v }
