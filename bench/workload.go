package bench

import (
	"fmt"
	"strings"
	"time"

	"cand/config"
)

// Workload is what a scenario puts on the buses and into cand's sockets. A
// Scenario without one (the classic scenarios) gets one from its LoadPercent,
// Period, Burst and DLC (Scenario.workload).
type Workload struct {
	// Kind names the workload in the tables: dlc0, ext29, vehicle, ...
	Kind string
	// Buses are the controllers, one bus each: the first on CE0 with the
	// configuration's INT pin, a second on CE1 with INT on GPIO 24.
	Buses []BusLoad
	// TX, when set, is written to the first controller's socket at a fixed rate.
	TX *TXStream
	// Loopback puts every controller in loopback mode (no bus: TX frames come
	// back as received frames inside the chip).
	Loopback bool
	// Lockstep: the peers of a bus start together with the same period, so each
	// one's window is the first one's (Burst): each burst is offered whole.
	Lockstep bool
}

// BusLoad is one controller's bus: its peers and the controller's filters.
type BusLoad struct {
	Peers []Peer
	// Filters is the controller's filters section as a YAML flow mapping; ""
	// accepts everything.
	Filters string
}

// Peer is one simulated node, as a sim.peers entry of the configuration.
type Peer struct {
	config.SimPeer
	// Filtered: the controller's filters drop every frame of this peer, so none
	// is expected on cand's socket (the kernel's driver has no filters: it
	// passes them up).
	Filtered bool
}

// TXStream is frames the benchmark writes to cand's socket: IDs in turn, 8 data
// bytes carrying the counter (canbus.Payload), one every Period.
type TXStream struct {
	IDs      []uint32
	Extended bool
	Period   time.Duration
}

// ce1IntGPIO is the second controller's INT pin (CE1), a common wiring of
// two-channel MCP2515 boards.
const ce1IntGPIO = 24

// workload is sc's workload: sc.Workload, or the classic single-peer one.
func (sc Scenario) workload() Workload {
	if sc.Workload != nil {
		return *sc.Workload
	}
	dlc := sc.DLC
	var peers []Peer
	switch {
	case sc.LoadPercent > 0:
		peers = []Peer{{SimPeer: config.SimPeer{Kind: config.PeerLoad, Name: "load", IDs: []uint32{0x123}, DLC: &dlc, LoadPercent: sc.LoadPercent}}}
	case sc.Burst > 1:
		for i := range sc.Burst {
			peers = append(peers, Peer{SimPeer: config.SimPeer{Kind: config.PeerPeriodic, Name: fmt.Sprintf("burst%d", i),
				IDs: []uint32{uint32(0x123 + i)}, DLC: &dlc, Period: config.Duration(sc.Period)}})
		}
	default:
		peers = []Peer{{SimPeer: config.SimPeer{Kind: config.PeerPeriodic, Name: "periodic", IDs: []uint32{0x123}, DLC: &dlc,
			Period: config.Duration(sc.Period)}}}
	}
	return Workload{Buses: []BusLoad{{Peers: peers}}, Lockstep: sc.Burst > 1}
}

// controllersYAML is the configuration's controllers section for sc.
func (sc Scenario) controllersYAML() string {
	wl := sc.workload()
	var b strings.Builder
	b.WriteString("controllers:\n")
	for i, bus := range wl.Buses {
		fmt.Fprintf(&b, "  - name: bench%d\n    bitrate: %d\n    int_poll_window: %s\n    interface: {name: vcan%d}\n",
			i, sc.Bitrate, sc.IntPollWindow, i)
		if i == 1 {
			fmt.Fprintf(&b, "    spi: {chip_select: ce1}\n    int_gpio: %d\n", ce1IntGPIO)
		}
		if wl.Loopback {
			b.WriteString("    mode: loopback\n")
		}
		if bus.Filters != "" {
			fmt.Fprintf(&b, "    filters: %s\n", bus.Filters)
		}
		if len(bus.Peers) > 0 {
			b.WriteString("    sim:\n      peers:\n")
			for _, p := range bus.Peers {
				fmt.Fprintf(&b, "        - %s\n", p.FlowYAML())
			}
		}
	}
	return b.String()
}

// applyBaseToAll gives every controller after the first the base's SPI clock and
// mode (config gives the first one the base's SPI settings), each keeping its own
// chip select; and the first controller the base's INT pin and oscillator when
// the base has them (a real board's wiring).
func applyBaseToAll(cfg *config.Config, base *Base) {
	if base == nil {
		return
	}
	for i := 1; i < len(cfg.Controllers); i++ {
		cs := cfg.Controllers[i].SPI.ChipSelect
		cfg.Controllers[i].SPI = base.SPI
		cfg.Controllers[i].SPI.ChipSelect = cs
	}
	if base.IntGPIO != 0 {
		cfg.Controllers[0].IntGPIO = base.IntGPIO
	}
	if base.OscillatorHz != 0 {
		for i := range cfg.Controllers {
			cfg.Controllers[i].OscillatorHz = base.OscillatorHz
		}
	}
}

func dlcPtr(v uint8) *uint8 { return &v }

// IDRange is n IDs from first on.
func IDRange(first uint32, n int) []uint32 {
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = first + uint32(i)
	}
	return ids
}
