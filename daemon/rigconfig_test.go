package daemon

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"cand/config"
)

// rigConfig builds the configuration a test's daemon runs with. It writes the
// YAML a user would and decodes it with config.Parse, so defaults and validation
// are exactly those of a configuration file. It starts with one controller, sim0
// on vcan0 at 500 kbit/s on the sim backend, with real-time scheduling and
// mlockall off (a test process may not have the rights) and no status socket;
// each setter applies to the controller added last.
type rigConfig struct {
	opts        rigOptions // what startRig does besides (faultrig_test.go)
	t           testing.TB
	metrics     []string // keys of the metrics mapping
	controllers []*rigController
	status      string   // status.socket and, if any, status.group, as YAML
	sections    []string // further top-level sections, each a "key: value" line
	hardware    []string // hardware keys beyond the backend, as YAML
	realtime    []string // realtime keys beyond priority 0 and mlockall false, as YAML
}

// rigController is one controller's keys, each kept as its YAML text.
type rigController struct {
	name, iface string
	ifaceKind   config.InterfaceKind // "" = the default
	ifaceKeys   []string             // further keys of the interface mapping
	bitrate     uint32
	spi         []string // keys of the spi mapping
	settings    []string // the controller's other "key: value" lines
	peers       []config.SimPeer
	simKeys     []string // keys of the sim mapping besides peers
	filters     *config.Filters
}

func newRigConfig(t testing.TB) *rigConfig {
	c := &rigConfig{t: t}
	return c.controller("sim0", "vcan0")
}

// controller adds a controller at 500 kbit/s with interface iface.
func (c *rigConfig) controller(name, iface string) *rigConfig {
	c.controllers = append(c.controllers, &rigController{name: name, iface: iface, bitrate: 500_000})
	return c
}

// named renames the last controller and its interface.
func (c *rigConfig) named(name, iface string) *rigConfig {
	c.last().name, c.last().iface = name, iface
	return c
}

// board makes the virtual Pi play board b (hardware.sim_board) instead of the
// default: a test whose traffic must be lossless picks a board fast enough for it.
func (c *rigConfig) board(b config.SimBoard) *rigConfig {
	c.hardware = append(c.hardware, "sim_board: "+string(b))
	return c
}

// clockRule runs the virtual Pi's clock on rule r (hardware.sim_cpu).
func (c *rigConfig) clockRule(r config.SimCPU) *rigConfig {
	c.hardware = append(c.hardware, "sim_cpu: "+string(r))
	return c
}

// kernelCost charges the owner's system calls by k (hardware.sim_kernel_cost).
func (c *rigConfig) kernelCost(k config.SimKernelCost) *rigConfig {
	c.hardware = append(c.hardware, "sim_kernel_cost: "+string(k))
	return c
}

// delivery sets realtime.delivery.
func (c *rigConfig) delivery(d config.Delivery) *rigConfig {
	c.realtime = append(c.realtime, "delivery: "+string(d))
	return c
}

// forceTurbo plays the board with force_turbo=1: its clocks at their maximum
// from the start, for a test whose traffic must be lossless from its first frame.
func (c *rigConfig) forceTurbo() *rigConfig {
	c.hardware = append(c.hardware, "sim_force_turbo: true")
	return c
}

// coreClock pins the board's core clock at hz (hardware.core_clock_hz, as
// core_freq does on a Pi).
func (c *rigConfig) coreClock(hz uint32) *rigConfig {
	c.hardware = append(c.hardware, fmt.Sprintf("core_clock_hz: %d", hz))
	return c
}

// stallBusAfter stalls the virtual Pi's peripheral bus d after start
// (hardware.sim_stall_bus_after).
func (c *rigConfig) stallBusAfter(d time.Duration) *rigConfig {
	c.hardware = append(c.hardware, "sim_stall_bus_after: "+d.String())
	return c
}

// chipAbsent leaves the last controller's chip off the board (sim.chip_absent).
func (c *rigConfig) chipAbsent() *rigConfig {
	c.last().simKeys = append(c.last().simKeys, "chip_absent: true")
	return c
}

// statusSocket serves the status document on the unix socket path, given to
// group ("" for the test's own).
func (c *rigConfig) statusSocket(path, group string) *rigConfig {
	c.status = fmt.Sprintf("socket: %q", path)
	if group != "" {
		c.status += fmt.Sprintf(", group: %q", group)
	}
	return c
}

func (c *rigConfig) last() *rigController { return c.controllers[len(c.controllers)-1] }

func (c *rigConfig) set(key string, value any) *rigConfig {
	c.last().settings = append(c.last().settings, fmt.Sprintf("%s: %v", key, value))
	return c
}

func (c *rigConfig) bitrate(bps uint32) *rigConfig {
	c.last().bitrate = bps
	return c
}

// spiClock sets spi.clock_hz.
func (c *rigConfig) spiClock(hz uint32) *rigConfig {
	c.last().spi = append(c.last().spi, fmt.Sprintf("clock_hz: %d", hz))
	return c
}

// chipSelect sets spi.chip_select ("ce0", "gpio24", ...) and, when activeHigh,
// spi.cs_active_high.
func (c *rigConfig) chipSelect(cs string, activeHigh bool) *rigConfig {
	c.last().spi = append(c.last().spi, "chip_select: "+cs)
	if activeHigh {
		c.last().spi = append(c.last().spi, "cs_active_high: true")
	}
	return c
}

// noInterface gives the last controller no SocketCAN interface (kind none): the
// daemon makes its own socketpair, for socketcand.
func (c *rigConfig) noInterface() *rigConfig {
	c.last().ifaceKind = config.KindNone
	return c
}

// interfaceKey sets a further key of the last controller's interface mapping
// (value as YAML).
func (c *rigConfig) interfaceKey(key string, value any) *rigConfig {
	c.last().ifaceKeys = append(c.last().ifaceKeys, fmt.Sprintf("%s: %v", key, value))
	return c
}

// vxcan makes the last controller's interface a vxcan pair.
func (c *rigConfig) vxcan() *rigConfig {
	c.last().ifaceKind = config.KindVXCAN
	return c
}

// socketcand adds the socketcand section, enabled, on a free loopback port,
// with further keys ("max_clients: 1", ...).
func (c *rigConfig) socketcand(keys ...string) *rigConfig {
	c.sections = append(c.sections, "socketcand: {"+strings.Join(append([]string{"enabled: true", "listen: 127.0.0.1:0"}, keys...), ", ")+"}")
	return c
}

func (c *rigConfig) intGPIO(pin int) *rigConfig { return c.set("int_gpio", pin) }

func (c *rigConfig) pollWindow(d time.Duration) *rigConfig { return c.set("int_poll_window", d) }

func (c *rigConfig) mode(m config.Mode) *rigConfig { return c.set("mode", m) }

func (c *rigConfig) oneShot() *rigConfig { return c.set("one_shot", true) }

func (c *rigConfig) errorFramesOff() *rigConfig { return c.set("error_frames", false) }

func (c *rigConfig) restartMs(ms int) *rigConfig { return c.set("restart_ms", ms) }

func (c *rigConfig) txTimeout(d time.Duration) *rigConfig { return c.set("tx_timeout", d) }

// metricsKey sets a key of the metrics section (value as YAML).
func (c *rigConfig) metricsKey(key string, value any) *rigConfig {
	c.metrics = append(c.metrics, fmt.Sprintf("%s: %v", key, value))
	return c
}

// peer adds a node to the controller's simulated bus; see periodicPeer,
// answerPeer and loadPeer.
func (c *rigConfig) peer(p config.SimPeer) *rigConfig {
	c.last().peers = append(c.last().peers, p)
	return c
}

// filters sets the acceptance masks and filters RXF0, RXF1, ... in order.
func (c *rigConfig) filters(mask0, mask1 config.Filter, filters ...config.Filter) *rigConfig {
	c.last().filters = &config.Filters{Mask0: mask0, Mask1: mask1, Filters: filters}
	return c
}

// periodicPeer sends ids in turn every period, dlc bytes each (standard IDs).
func periodicPeer(name string, period time.Duration, dlc uint8, ids ...uint32) config.SimPeer {
	return config.SimPeer{Kind: config.PeerPeriodic, Name: name, IDs: ids, Period: config.Duration(period), DLC: &dlc}
}

// extended makes a periodic or load peer's IDs 29-bit.
func extended(p config.SimPeer) config.SimPeer {
	p.Extended = true
	return p
}

// answerPeer answers every frame it receives with the same data at ID + idOffset.
func answerPeer(name string, idOffset uint32) config.SimPeer {
	return config.SimPeer{Kind: config.PeerAnswer, Name: name, IDOffset: idOffset}
}

// loadPeer keeps the bus percent busy with id, dlc bytes each.
func loadPeer(name string, id uint32, dlc uint8, percent float64) config.SimPeer {
	return config.SimPeer{Kind: config.PeerLoad, Name: name, IDs: []uint32{id}, DLC: &dlc, LoadPercent: percent}
}

// filter is a standard acceptance filter or mask.
func filter(id uint32) config.Filter { return config.Filter{ID: id} }

// extendedFilter is an extended acceptance filter or mask.
func extendedFilter(id uint32) config.Filter { return config.Filter{ID: id, Extended: true} }

// build decodes the configuration; a configuration config.Parse refuses fails
// the test.
func (c *rigConfig) build() *config.Config {
	c.t.Helper()
	yaml := c.yaml()
	cfg, err := config.Parse("test.yaml", []byte(yaml))
	if err != nil {
		c.t.Fatalf("%v\nin:\n%s", err, yaml)
	}
	return cfg
}

// start runs the daemon with this configuration (see startRig).
func (c *rigConfig) start() *rig {
	c.t.Helper()
	return startRig(c.t, c.build(), c.opts)
}

// yaml is the configuration file. Keys the test did not set are left out, so
// config.Parse fills in their defaults.
func (c *rigConfig) yaml() string {
	var b strings.Builder
	fmt.Fprintf(&b, "hardware: {%s}\nrealtime: {%s}\n", strings.Join(append([]string{"backend: sim"}, c.hardware...), ", "),
		strings.Join(append([]string{"priority: 0", "mlockall: false"}, c.realtime...), ", "))
	if len(c.metrics) > 0 {
		fmt.Fprintf(&b, "metrics: {%s}\n", strings.Join(c.metrics, ", "))
	}
	status := c.status
	if status == "" {
		status = `socket: ""`
	}
	fmt.Fprintf(&b, "status: {%s}\n", status)
	for _, s := range c.sections {
		b.WriteString(s + "\n")
	}
	b.WriteString("controllers:\n")
	for _, ct := range c.controllers {
		fmt.Fprintf(&b, "  - name: %s\n    bitrate: %d\n", ct.name, ct.bitrate)
		if len(ct.spi) > 0 {
			fmt.Fprintf(&b, "    spi: {%s}\n", strings.Join(ct.spi, ", "))
		}
		for _, s := range ct.settings {
			fmt.Fprintf(&b, "    %s\n", s)
		}
		iface := []string{"name: " + ct.iface}
		if ct.ifaceKind != "" {
			iface = append(iface, "kind: "+string(ct.ifaceKind))
		}
		fmt.Fprintf(&b, "    interface: {%s}\n", strings.Join(append(iface, ct.ifaceKeys...), ", "))
		if len(ct.peers) > 0 || len(ct.simKeys) > 0 {
			b.WriteString("    sim:\n")
			for _, k := range ct.simKeys {
				fmt.Fprintf(&b, "      %s\n", k)
			}
		}
		if len(ct.peers) > 0 {
			b.WriteString("      peers:\n")
			for _, p := range ct.peers {
				fmt.Fprintf(&b, "        - %s\n", p.FlowYAML())
			}
		}
		if f := ct.filters; f != nil {
			fmt.Fprintf(&b, "    filters:\n      mask0: %s\n      mask1: %s\n      filters:\n", filterYAML(f.Mask0), filterYAML(f.Mask1))
			for _, rxf := range f.Filters {
				fmt.Fprintf(&b, "        - %s\n", filterYAML(rxf))
			}
		}
	}
	return b.String()
}

func filterYAML(f config.Filter) string {
	if f.Extended {
		return fmt.Sprintf("{id: %#x, extended: true}", f.ID)
	}
	return fmt.Sprintf("{id: %#x}", f.ID)
}
