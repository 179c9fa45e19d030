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
	// DefaultIntPollWindow keeps the INT poll window on: under full RX load it
	// loses fewer frames than edges alone (the comparisons are in docs/clock.md,
	// "Lossless defaults"), and the owner loop's bound (bridge.PollsPerTurn,
	// bridge.WindowRearms) keeps every other duty served.
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
	fillDefaults(c, "", d, configDefaults())
	for i := range c.Controllers {
		ct := &c.Controllers[i]
		p := fmt.Sprintf("controllers[%d]", i)
		fillDefaults(ct, p, d, controllerDefaults())
		for j := range ct.Sim.Peers {
			fillDefaults(&ct.Sim.Peers[j], fmt.Sprintf("%s.sim.peers[%d]", p, j), d, peerDefaults(j))
		}
	}
	defaultInterfaceNames(c, d)
}

// A setting is one optional setting's default: key is its path below the
// section, fill writes the default into the section when the file left it out.
type setting[T any] struct {
	key  string
	fill func(s *T, d *decoder, path string)
}

// absent is a setting filled when the decoder did not record its key.
func absent[T any](key string, fill func(*T)) setting[T] {
	return setting[T]{key, func(s *T, d *decoder, path string) {
		if !d.has(path) {
			fill(s)
		}
	}}
}

// unset is a setting held by a pointer, filled when the pointer is nil: left
// out, or given a value that could not be decoded (validation reads through
// it). field returns nil where the setting's parent is itself absent.
func unset[T, V any](key string, field func(*T) **V, v V) setting[T] {
	return setting[T]{key, func(s *T, _ *decoder, _ string) {
		if p := field(s); p != nil && *p == nil {
			*p = ptr(v)
		}
	}}
}

// fillDefaults fills the settings of table into the section s at path.
func fillDefaults[T any](s *T, path string, d *decoder, table []setting[T]) {
	for _, st := range table {
		st.fill(s, d, join(path, st.key))
	}
}

// configDefaults are the defaults of the sections outside the controllers.
func configDefaults() []setting[Config] {
	return []setting[Config]{
		absent("hardware.backend", func(c *Config) { c.Hardware.Backend = BackendSim }),
		// The strict rule: only the host's scheduler and hypervisor leave the
		// board's time, so what the virtual Pi shows holds for a Pi. The driver
		// reads its deadlines and latencies in the board's time (daemon/hardware.go),
		// so they mean the same spans on the virtual Pi as on a real one
		// (docs/clock.md).
		absent("hardware.sim_cpu", func(c *Config) { c.Hardware.SimCPU = SimCPUStrict }),
		absent("hardware.sim_board", func(c *Config) { c.Hardware.SimBoard = SimBoardPi3 }),
		absent("hardware.sim_kernel_cost", func(c *Config) { c.Hardware.SimKernelCost = SimKernelCostBoard }),
		absent("hardware.sim_host_noise", func(c *Config) { c.Hardware.SimHostNoise = SimHostNoiseClip }),
		// On a real board the idle clock is where first frames are lost
		// (docs/operations.md, "The CPU clock"); on the virtual Pi the default
		// stays the stock Raspberry Pi OS governor the benchmarks measure. After
		// hardware.backend, whose default it reads.
		absent("hardware.hold_cpu_clock", func(c *Config) { c.Hardware.HoldCPUClock = c.Hardware.Backend == BackendBCM2835 }),
		absent("hardware.clock_source", func(c *Config) { c.Hardware.ClockSource = ClockSourceAuto }),
		absent("hardware.poll_budget", func(c *Config) { c.Hardware.PollBudget = DefaultPollBudget }),
		absent("hardware.gpio_chip", func(c *Config) { c.Hardware.GPIOChip = DefaultGPIOChip }),
		absent("hardware.analyzer_pins.interrupt", func(c *Config) { c.Hardware.AnalyzerPins.Interrupt = -1 }),
		absent("hardware.analyzer_pins.spi", func(c *Config) { c.Hardware.AnalyzerPins.SPI = -1 }),
		absent("hardware.analyzer_pins.socket_write", func(c *Config) { c.Hardware.AnalyzerPins.SocketWrite = -1 }),
		absent("realtime.priority", func(c *Config) { c.Realtime.Priority = DefaultPriority }),
		absent("realtime.cpu", func(c *Config) { c.Realtime.CPU = -1 }),
		absent("realtime.delivery", func(c *Config) { c.Realtime.Delivery = DeliveryAuto }),
		absent("realtime.delivery_cpu", func(c *Config) { c.Realtime.DeliveryCPU = -1 }),
		unset("realtime.mlockall", func(c *Config) **bool { return &c.Realtime.Mlockall }, true),
		unset("metrics.listen", func(c *Config) **string { return &c.Metrics.Listen }, DefaultMetrics),
		absent("metrics.max_connections", func(c *Config) { c.Metrics.MaxConnections = DefaultMetricsMaxConnections }),
		absent("metrics.read_timeout", func(c *Config) { c.Metrics.ReadTimeout = DefaultMetricsReadTimeout }),
		absent("metrics.write_timeout", func(c *Config) { c.Metrics.WriteTimeout = DefaultMetricsWriteTimeout }),
		absent("metrics.idle_timeout", func(c *Config) { c.Metrics.IdleTimeout = DefaultMetricsIdleTimeout }),
		unset("status.socket", func(c *Config) **string { return &c.Status.Socket }, DefaultStatusSocket),
		absent("socketcand.listen", func(c *Config) { c.Socketcand.Listen.UnmarshalText([]byte(DefaultSocketcandListen)) }),
		absent("socketcand.max_clients", func(c *Config) { c.Socketcand.MaxClients = DefaultSocketcandMaxClients }),
	}
}

// controllerDefaults are the defaults of one controller's settings.
func controllerDefaults() []setting[Controller] {
	return []setting[Controller]{
		absent("spi.clock_hz", func(ct *Controller) { ct.SPI.ClockHz = DefaultSPIClockHz }),
		absent("spi.chip_select", func(ct *Controller) { ct.SPI.ChipSelect = DefaultChipSelect }),
		absent("int_gpio", func(ct *Controller) { ct.IntGPIO = DefaultIntGPIO }),
		absent("oscillator_hz", func(ct *Controller) { ct.OscillatorHz = DefaultOscillatorHz }),
		absent("mode", func(ct *Controller) { ct.Mode = ModeNormal }),
		unset("error_frames", func(ct *Controller) **bool { return &ct.ErrorFrames }, true),
		unset("restart_ms", func(ct *Controller) **uint32 { return &ct.RestartMs }, DefaultRestartMs),
		absent("tx_timeout", func(ct *Controller) { ct.TxTimeout = DefaultTxTimeout }),
		absent("int_poll_window", func(ct *Controller) { ct.IntPollWindow = DefaultIntPollWindow }),
		unset("filters.rollover", func(ct *Controller) **bool {
			if ct.Filters == nil {
				return nil
			}
			return &ct.Filters.Rollover
		}, true),
		// SJW 1 belongs to timing given as time quanta, not to raw CNF registers.
		absent("timing.sjw", func(ct *Controller) {
			if ct.Timing != nil && ct.Timing.CNF1 == nil {
				ct.Timing.SJW = 1
			}
		}),
		absent("interface.kind", func(ct *Controller) { ct.Interface.Kind = KindVCAN }),
		absent("interface.rcvbuf", func(ct *Controller) { ct.Interface.RcvBuf = DefaultRcvBuf }),
		absent("interface.on_delete", func(ct *Controller) { ct.Interface.OnDelete = OnDeleteRecreate }),
	}
}

// peerDefaults are the defaults of the simulated peer at index i of its list.
func peerDefaults(i int) []setting[SimPeer] {
	return []setting[SimPeer]{
		absent("name", func(sp *SimPeer) { sp.Name = string(sp.Kind) + strconv.Itoa(i) }),
		absent("period", func(sp *SimPeer) { sp.Period = DefaultPeerPeriod }),
		unset("dlc", func(sp *SimPeer) **uint8 { return &sp.DLC }, DefaultPeerDLC),
		absent("id_offset", func(sp *SimPeer) { sp.IDOffset = DefaultPeerIDOffset }),
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
