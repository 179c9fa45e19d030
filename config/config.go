// Package config is cand's YAML configuration: the schema, defaults, and validation
// with errors that name the file, the line and the key, and say what is allowed.
package config

import (
	"encoding"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cand/hw/pinout"
)

// Config is the whole file. After Load or Parse every default is filled in: every
// pointer field except Controller.Timing and Controller.Filters is non-nil.
//
// A field's `reload` tag says what a reload of the file (SIGHUP) does when the key
// changes: "settings", the owner thread takes it between two turns; "chip", the
// controller is restarted with it; "endpoint", the metrics endpoint is served
// anew. A key without the tag needs a restart of cand. The daemon reads the tags
// (daemon/reload.go) and its tests refuse any other value.
type Config struct {
	Hardware    Hardware     `yaml:"hardware"`
	Realtime    Realtime     `yaml:"realtime"`
	Metrics     Metrics      `yaml:"metrics" reload:"endpoint"`
	Status      Status       `yaml:"status"`
	Socketcand  Socketcand   `yaml:"socketcand"`  // off by default; see socketcand.go
	Controllers []Controller `yaml:"controllers"` // at least one

	// Warnings are findings that do not stop cand but deserve a look (a realtime
	// priority above the kernel's IRQ threads, an inverted chip select...), each as
	// "file:line:col: key: message". Not read from the file.
	Warnings []string `yaml:"-"`
}

// Backend selects where the registers are.
type Backend string

const (
	BackendSim     Backend = "sim"     // the virtual Pi (default)
	BackendBCM2835 Backend = "bcm2835" // real SPI0/GPIO registers through /dev/mem and /dev/gpiomem
)

// SimCPU is the rule of the virtual Pi's clock (backend sim only; sim/clock,
// docs/clock.md).
type SimCPU string

const (
	// SimCPUStrict: only what the host's scheduler or hypervisor did to the owner
	// thread leaves the board's time; cand's own work is charged at the board's
	// speed (hardware.sim_board). deploy/sim.yaml's choice.
	SimCPUStrict SimCPU = "strict"
	// SimCPUDedicated: the forgiving rule, for comparison: every gap of more than
	// 20µs between register accesses without a wait for the hardware leaves the
	// board's time, the driver's own work and Go runtime parks included, and the
	// driver runs at host speed.
	SimCPUDedicated SimCPU = "dedicated"
	// SimCPUShared: the virtual Pi runs on host time, host stalls included, at
	// host speed.
	SimCPUShared SimCPU = "shared"
)

// SimBoard is the Raspberry Pi the virtual Pi plays (backend sim only): its SoC,
// cores, clocks as its firmware scales them, and CPU speed (docs/boards.md).
type SimBoard string

const (
	SimBoardPiZero SimBoard = "pi-zero"
	SimBoardPi1    SimBoard = "pi1"
	SimBoardPi2    SimBoard = "pi2"
	SimBoardPi3    SimBoard = "pi3" // the default
	SimBoardPi4    SimBoard = "pi4"
)

// SimHostNoise is what the strict rule does with the owner thread's running far
// beyond the median of the same stretch of its code: the host's interrupts and
// hypervisor exits counted as the thread's CPU time (backend sim only;
// docs/clock.md, "Host noise").
type SimHostNoise string

const (
	// SimHostNoiseClip: running beyond 8 times its stretch's median, and beyond
	// 5 µs, is taken out as the host's (the default).
	SimHostNoiseClip SimHostNoise = "clip"
	// SimHostNoiseCharge: every running charged at the board's factor, host
	// noise included, for comparison.
	SimHostNoiseCharge SimHostNoise = "charge"
)

// SimKernelCost is how the strict rule charges the owner thread's system calls
// (backend sim only; docs/boards.md, "What the board's kernel costs").
type SimKernelCost string

const (
	// SimKernelCostBoard: each metered system call at the board's published
	// cost for its kind of kernel work, measured against this host; the board's
	// park and wake-up from its published wake-up figure (the default).
	SimKernelCostBoard SimKernelCost = "board"
	// SimKernelCostUserFactor: system calls, parks and wake-ups at the host's
	// time times the user-code factor, for comparison.
	SimKernelCostUserFactor SimKernelCost = "user_factor"
)

// ClockSource is the clock the driver reads its deadlines and latencies from
// (docs/clock-source.md).
type ClockSource string

const (
	// ClockSourceAuto: the System Timer where reading the runtime's clock is a
	// system call (a Pi 1 or Zero; a Pi 4 on a 32-bit kernel with a device tree
	// from before 2025), the runtime's clock otherwise; on the virtual Pi, by the
	// board it plays. The default.
	ClockSourceAuto ClockSource = "auto"
	// ClockSourceRuntime: Go's runtime clock, CLOCK_MONOTONIC through the vDSO
	// (or the clock_gettime system call where there is no vDSO clock).
	ClockSourceRuntime ClockSource = "runtime"
	// ClockSourceSystemTimer: the BCM283x System Timer's 1 MHz counter, read from
	// its registers and tied to CLOCK_MONOTONIC.
	ClockSourceSystemTimer ClockSource = "system_timer"
)

// Hardware is the SoC side, shared by all controllers on SPI0.
type Hardware struct {
	Backend Backend `yaml:"backend"` // sim | bcm2835; default sim
	// CoreClockHz is the VPU core clock SPI0 divides. 0 = the board's highest
	// (so SCLK never exceeds the request). Set it when core_freq is pinned.
	CoreClockHz uint32 `yaml:"core_clock_hz"`
	// PollBudget is how long the SPI engine busy-polls for a transfer's end before it
	// sleeps; default 20µs (the reference measurements); 0..1s.
	PollBudget Duration `yaml:"poll_budget"`
	// GPIOChip is the character device for interrupt lines; default /dev/gpiochip0.
	GPIOChip string `yaml:"gpio_chip"`
	// ClockSource is auto (default), runtime or system_timer; see ClockSource.
	ClockSource ClockSource `yaml:"clock_source"`
	// AnalyzerPins are optional GPIOs toggled at stage boundaries for a logic analyzer.
	AnalyzerPins AnalyzerPins `yaml:"analyzer_pins"`
	// HoldCPUClock keeps the ARM clock at its highest while cand runs: every
	// cpufreq policy's scaling_min_freq raised to its scaling_max_freq, and put
	// back when cand stops, also after a crash (the packaged unit's
	// `cand cpufreq hold` and `cand cpufreq restore` steps; hw/cpufreq). The
	// governor would otherwise leave a quiet board at its idle clock, where the
	// first frames of a burst are lost (docs/operations.md, "The CPU clock").
	// Default true on backend bcm2835, false on sim, where it plays the board
	// with its ARM clock held and touches no real sysfs.
	HoldCPUClock bool `yaml:"hold_cpu_clock"`
	// SimCPU is strict (default), dedicated or shared; see SimCPU.
	SimCPU SimCPU `yaml:"sim_cpu"`
	// SimBoard is pi-zero, pi1, pi2, pi3 (default) or pi4; see SimBoard.
	SimBoard SimBoard `yaml:"sim_board"`
	// SimForceTurbo plays the board with config.txt's force_turbo=1: its ARM and
	// core clocks at their maximum even when idle (default false: the ondemand
	// governor scales them; docs/boards.md).
	SimForceTurbo bool `yaml:"sim_force_turbo"`
	// SimKernelCost is board (default) or user_factor; see SimKernelCost.
	SimKernelCost SimKernelCost `yaml:"sim_kernel_cost"`
	// SimHostNoise is clip (default) or charge; see SimHostNoise.
	SimHostNoise SimHostNoise `yaml:"sim_host_noise"`
	// SimStallBusAfter stalls the virtual Pi's peripheral bus this long (host time)
	// after cand starts: the owner thread's next SPI0 or GPIO access never returns,
	// as on a board whose bus hangs, so the systemd watchdog can be seen to act.
	// Default 0: never. Backend sim only.
	SimStallBusAfter Duration `yaml:"sim_stall_bus_after"`
}

// AnalyzerPins: BCM GPIO numbers 0..53, -1 (default) = off. They must not be an SPI0
// pin (9, 10, 11), a chip select or an INT line, nor equal each other.
type AnalyzerPins struct {
	Interrupt   int `yaml:"interrupt"`    // high while the interrupt is handled
	SPI         int `yaml:"spi"`          // high while an SPI transfer runs
	SocketWrite int `yaml:"socket_write"` // high while a frame is written to the socket
}

// Realtime is the owner thread's scheduling.
type Realtime struct {
	// Priority is SCHED_FIFO 1..99 for the owner thread only; 0 = normal scheduling.
	// Default 40: below the kernel's IRQ threads (50), which deliver the GPIO edges;
	// above 49 loads with a warning.
	Priority int `yaml:"priority"`
	// CPU pins the owner thread to CPU 0..1023; -1 (default) = no pinning.
	CPU int `yaml:"cpu"`
	// Mlockall locks the process's memory (default true).
	Mlockall *bool `yaml:"mlockall"`
	// Delivery is which thread writes received frames to the interface:
	// DeliveryAuto (default), DeliveryThread or DeliveryOwner (DeliveryInline:
	// for comparison only).
	Delivery Delivery `yaml:"delivery"`
	// DeliveryCPU pins the delivery thread to CPU 0..1023; -1 (default) = no
	// pinning. Its SCHED_FIFO priority is one below the owner's.
	DeliveryCPU int `yaml:"delivery_cpu"`
	// Required makes a setting above that the kernel refuses a start-up error,
	// naming what is missing (CAP_SYS_NICE, RLIMIT_RTPRIO, CAP_IPC_LOCK, the CPU);
	// by default (false) cand logs the refusal as a warning and runs without it.
	Required bool `yaml:"required"`
}

// Delivery is which thread writes the frames the owner thread read from the chip
// to the interface. The owner drains the chip first either way.
type Delivery string

const (
	// DeliveryAuto: a delivery thread where the board has more than one core,
	// the owner thread on a one-core board.
	DeliveryAuto Delivery = "auto"
	// DeliveryThread: a delivery thread on another core, spinning for a while
	// after each frame before it parks.
	DeliveryThread Delivery = "thread"
	// DeliveryOwner: the owner thread, after each drain of the chip.
	DeliveryOwner Delivery = "owner"
	// DeliveryInline: for comparison only: the owner writes each frame as soon
	// as it is read, and reads the INT line's events before the drain.
	DeliveryInline Delivery = "inline"
)

// Metrics is the Prometheus endpoint. Its limits keep scrapers, slow or idle
// clients and password guessers from taking more than a bounded share of the
// board; docs/security.md explains them.
type Metrics struct {
	// Listen is host:port for /metrics; default 127.0.0.1:9108 (also when the key is
	// present but empty: `listen:`); "" disables it.
	Listen *string `yaml:"listen"`
	// WebConfig is a Prometheus exporters' web configuration file (TLS, basic
	// authentication with bcrypt hashes), the format of node_exporter's
	// --web.config.file; "" (default) serves plain HTTP without authentication.
	// Read and checked at start.
	WebConfig string `yaml:"web_config"`
	// MaxConnections bounds the open connections, 1..1024, default 8; more wait
	// in the kernel's accept queue until one closes.
	MaxConnections int `yaml:"max_connections"`
	// ReadTimeout bounds reading a request, TLS handshake and headers included,
	// from the connection's start or the end of the previous request's idle time;
	// default 5s; 1ms..5m.
	ReadTimeout Duration `yaml:"read_timeout"`
	// WriteTimeout bounds answering a request once its headers are read; default
	// 10s (Prometheus's default scrape timeout); 1ms..5m.
	WriteTimeout Duration `yaml:"write_timeout"`
	// IdleTimeout closes a keep-alive connection that has no next request for
	// this long; default 30s (a 15 s scrape interval keeps its connection);
	// 1ms..1h.
	IdleTimeout Duration `yaml:"idle_timeout"`
}

// Status is the local endpoint `cand status` reads (docs/status.md).
type Status struct {
	// Socket is the unix socket's path, absolute; default /run/cand/status.sock
	// (also when the key is present but empty: `socket:`); "" disables it.
	Socket *string `yaml:"socket"`
	// Group may read the socket besides its owner: the socket is mode 0660, owned
	// by the daemon's user (root) and this group, which must exist. Default "":
	// the daemon's own group.
	Group string `yaml:"group"`
}

// Controller is one MCP2515 and its SocketCAN interface.
type Controller struct {
	Name string `yaml:"name"` // label in logs and metrics, unique; default the interface name

	SPI SPI `yaml:"spi"`
	// IntGPIO is the BCM GPIO number 0..53 of the MCP2515's INT output; default 25, the
	// PiCAN2/Waveshare wiring. One per controller; not an SPI0 pin or chip select.
	IntGPIO int `yaml:"int_gpio"`
	// IntPollWindow busy-polls the INT level through the GPIO registers for this long
	// after each interrupt instead of waiting for the next edge; default 500us
	// (DefaultIntPollWindow); 0 = off; at most 1s.
	IntPollWindow Duration `yaml:"int_poll_window" reload:"settings"`
	// IntDebounce is the GPIO character device's debounce period; 0 (default) = off;
	// at most 1s.
	IntDebounce Duration `yaml:"int_debounce"`

	OscillatorHz uint32 `yaml:"oscillator_hz" reload:"chip"` // MCP2515 crystal, 1..25 MHz; default 16 MHz
	// Bitrate is 10k..1M bit/s; required unless Timing is given (then it defaults to
	// the timing's bitrate and, if given, must match it within the kernel's 5 %).
	Bitrate uint32 `yaml:"bitrate" reload:"chip"`
	// SamplePoint in (0,1), e.g. 0.875; 0 (default) = the kernel's default for the
	// bitrate (87.5 % ≤ 500k, 80 % ≤ 800k, 75 % above). Not with Timing.
	SamplePoint float64 `yaml:"sample_point" reload:"chip"`
	// Timing, when set, gives the bit timing explicitly instead of computing it with
	// the kernel's algorithm (mcp2515.CalcBitTiming). Use Controller.BitTiming.
	Timing *Timing `yaml:"timing" reload:"chip"`

	Mode           Mode `yaml:"mode" reload:"chip"`            // normal | listen-only | loopback; default normal
	OneShot        bool `yaml:"one_shot" reload:"chip"`        // no automatic retransmission
	TripleSampling bool `yaml:"triple_sampling" reload:"chip"` // CNF2.SAM; with timing.cnf2, SAM must agree
	// ErrorFrames sends SocketCAN error frames (default true).
	ErrorFrames *bool `yaml:"error_frames" reload:"settings"`
	// RestartMs restarts after bus-off after this many ms (like ip link restart-ms);
	// 0 = manual restart only. Default 100.
	RestartMs *uint32 `yaml:"restart_ms" reload:"settings"`
	// TxTimeout aborts a frame that has not left after this long; default 1s; 0 = never.
	TxTimeout Duration `yaml:"tx_timeout" reload:"settings"`

	Filters *Filters `yaml:"filters" reload:"chip"` // nil = accept everything

	Interface Interface `yaml:"interface"`

	// Sim describes the simulated bus this controller sits on (backend sim only).
	Sim SimBus `yaml:"sim"`
}

// SPI is one device on SPI0.
type SPI struct {
	ClockHz uint32 `yaml:"clock_hz"` // requested SCLK, 1 kHz..10 MHz (MCP2515 maximum); default 10 MHz
	Mode    uint8  `yaml:"mode"`     // 0 (default) or 3: the MCP2515 supports only these; 1 and 2 are refused
	// ChipSelect: "ce0" (default, GPIO 8), "ce1" (GPIO 7), or "gpioN" for any BCM GPIO
	// 0..53 except the SPI0 data pins 9, 10, 11, in any letter case. One controller
	// per chip select. Parsed when the file is decoded (pinout.ParseChipSelect).
	ChipSelect pinout.ChipSelect `yaml:"chip_select"`
	// CSActiveHigh inverts the chip select (an MCP2515 needs active-low; loads with a
	// warning, for boards with an inverter on the line).
	CSActiveHigh bool `yaml:"cs_active_high"`
}

// Mode is the controller's operating mode.
type Mode string

const (
	ModeNormal     Mode = "normal"
	ModeListenOnly Mode = "listen-only"
	ModeLoopback   Mode = "loopback"
)

// Timing is an explicit bit timing: either all three CNF bytes, or brp, prop_seg,
// phase_seg1 and phase_seg2 (sjw defaults to 1), not both. Checked against the
// MCP2515 datasheet's rules (mcp2515.BitTiming.Check).
type Timing struct {
	CNF1 *uint8 `yaml:"cnf1"`
	CNF2 *uint8 `yaml:"cnf2"`
	CNF3 *uint8 `yaml:"cnf3"`

	BRP       uint32 `yaml:"brp"`        // 1..64, the kernel's brp: TQ = brp·2/fosc (CNF1.BRP = brp−1)
	PropSeg   uint32 `yaml:"prop_seg"`   // 1..8 TQ
	PhaseSeg1 uint32 `yaml:"phase_seg1"` // 1..8 TQ
	PhaseSeg2 uint32 `yaml:"phase_seg2"` // 2..8 TQ
	SJW       uint32 `yaml:"sjw"`        // 1..4 TQ, < phase_seg2; default 1
}

// Filters are the MCP2515's acceptance masks and filters. RXB0 uses Mask0 with
// filters 0..1, RXB1 uses Mask1 with filters 2..5 (datasheet §4.5). IDs accept hex (0x7FF).
type Filters struct {
	Mask0    Filter   `yaml:"mask0"`
	Mask1    Filter   `yaml:"mask1"`
	Filters  []Filter `yaml:"filters"`  // up to 6: RXF0..RXF5
	Rollover *bool    `yaml:"rollover"` // RXB0 → RXB1 when RXB0 is full (default true)
}

// Filter is an identifier (or mask) and whether it is extended.
type Filter struct {
	ID       uint32 `yaml:"id"` // ≤ 0x7FF, or ≤ 0x1FFFFFFF when extended
	Extended bool   `yaml:"extended"`
}

// InterfaceKind is the virtual SocketCAN interface type.
type InterfaceKind string

const (
	KindVCAN  InterfaceKind = "vcan"
	KindVXCAN InterfaceKind = "vxcan"
	// KindSLCAN: a kernel CAN netdev made by the slcan line discipline on a
	// pseudo-terminal cand holds (Linux 6.0 or later, module slcan): `ip link set
	// NAME type can bitrate` reprograms the controller, `ip -details link show`
	// shows its bus state. docs/interfaces.md.
	KindSLCAN InterfaceKind = "slcan"
	// KindNone: no SocketCAN interface (a container, a kernel without CAN): the
	// controller's frames go to socketcand's clients only (socketcand.enabled).
	KindNone InterfaceKind = "none"
)

// Interface is the SocketCAN side.
type Interface struct {
	// Name is a Linux interface name (1..15 characters, no '/', ':' or white space),
	// unique. Default: the lowest free can0, can1, ... (vcan0, vcan1, ... on the sim
	// backend) not named by another controller. It is also the bus name
	// socketcand's clients open, with any kind.
	Name string        `yaml:"name"`
	Kind InterfaceKind `yaml:"kind"` // vcan (default) | vxcan | slcan | none
	// Peer is the other end of a vxcan pair (kind vxcan only): the end cand opens,
	// while your tools use Name. Default Name+"p" (can0 → can0p); a valid, unique
	// interface name.
	Peer string `yaml:"peer"`
	// NetNS places Name, the applications' end of a vxcan pair (kind vxcan only),
	// in another network namespace when cand creates the pair: a namespace file's
	// absolute path (/run/netns/NAME, as `ip netns add NAME` makes it) or a process
	// ID living in it. Default: cand's own namespace. docs/interfaces.md.
	NetNS NetNS `yaml:"netns"`
	// RemoveOnExit deletes the interface (a vxcan pair: both ends) when cand stops.
	// By default (false) it outlives cand, set down, as a kernel driver's netdev
	// outlives a restart of its driver: applications' sockets stay bound to it.
	RemoveOnExit bool `yaml:"remove_on_exit"`
	// RcvBuf is the socket receive buffer in bytes (SO_RCVBUFFORCE): the TX back-pressure
	// queue, since a vcan never blocks its senders (with kind none, the send buffer
	// of each end of the socketpair, which bounds that direction's queue). Default
	// 4 MiB; 4 KiB..1 GiB.
	RcvBuf int `yaml:"rcvbuf"`
	// OnDelete is what cand does when the interface is deleted while it runs (`ip link
	// del`): recreate (default) creates it again and bridges on; exit stops cand with
	// a non-zero status, for systemd to restart it.
	OnDelete OnDelete `yaml:"on_delete"`
}

// OnDelete is what cand does when its interface is deleted under it.
type OnDelete string

const (
	OnDeleteRecreate OnDelete = "recreate"
	OnDeleteExit     OnDelete = "exit"
)

func (OnDelete) choices() []string { return []string{string(OnDeleteRecreate), string(OnDeleteExit)} }

// NetNS is a network namespace: Path, an absolute path of a namespace file, or
// PID, a process in it; written as the path or the number. The zero NetNS is
// cand's own namespace.
type NetNS struct {
	Path string
	PID  int
}

var _ encoding.TextUnmarshaler = (*NetNS)(nil)

// IsZero reports whether n is cand's own namespace (the key left out).
func (n NetNS) IsZero() bool { return n == NetNS{} }

// UnmarshalText reads a path starting with / or a process ID 1..4194304 (the
// kernel's PID_MAX_LIMIT).
func (n *NetNS) UnmarshalText(text []byte) error {
	s := string(text)
	if strings.HasPrefix(s, "/") {
		*n = NetNS{Path: s}
		return nil
	}
	pid, err := strconv.Atoi(s)
	if err != nil || pid < 1 || pid > 4194304 {
		return fmt.Errorf("%s is not a network namespace: write a namespace file's absolute path (/run/netns/NAME) or a process ID", quote(s))
	}
	*n = NetNS{PID: pid}
	return nil
}

// SimBus is the simulated CAN bus a controller sits on.
type SimBus struct {
	Peers []SimPeer `yaml:"peers"`
	// ChipAbsent leaves the MCP2515 off the board: MISO floats and its pull-up
	// reads 0xFF, as with no chip fitted. Default false.
	ChipAbsent bool `yaml:"chip_absent"`
}

// SimPeerKind selects a peer's behaviour.
type SimPeerKind string

const (
	PeerPeriodic SimPeerKind = "periodic" // sends frames with a counter every Period
	PeerAnswer   SimPeerKind = "answer"   // answers each received frame: same data, ID + IDOffset
	PeerLoad     SimPeerKind = "load"     // saturates the bus at LoadPercent
	PeerErrors   SimPeerKind = "errors"   // destroys the next frame on the bus every Period
)

// SimPayload is a sending peer's data: the counter, or the data with the fewest or
// the most stuff bits for each ID (the same every time).
type SimPayload string

const (
	PayloadCounter  SimPayload = "counter"
	PayloadStuffMin SimPayload = "stuff-min"
	PayloadStuffMax SimPayload = "stuff-max"
)

// SimPeer is one node on the simulated bus.
type SimPeer struct {
	Kind     SimPeerKind `yaml:"kind"`      // required
	Name     string      `yaml:"name"`      // default kind and index: periodic0, answer1...
	IDs      []uint32    `yaml:"ids"`       // periodic/load: IDs sent in turn, at least one; hex accepted
	Extended bool        `yaml:"extended"`  // periodic/load: IDs are 29-bit (≤ 0x1FFFFFFF), else ≤ 0x7FF
	Period   Duration    `yaml:"period"`    // periodic, errors: > 0, default 100ms
	DLC      *uint8      `yaml:"dlc"`       // periodic/load: 0..8, default 8; data = counter (big-endian) then pattern
	IDOffset uint32      `yaml:"id_offset"` // answer: default 1
	// LoadPercent: load peer's share of bus time, 1..100 (load peers only; required).
	LoadPercent float64 `yaml:"load_percent"`
	// DLCs gives each of ids its own data length, 0..8 (periodic/load; one per id;
	// not with dlc).
	DLCs []uint8 `yaml:"dlcs"`
	// Remote sends remote frames (periodic/load): the dlc as given, no data.
	Remote bool `yaml:"remote"`
	// Payload is counter ("" is counter too: the default), stuff-min or stuff-max
	// (periodic/load, not with remote).
	Payload SimPayload `yaml:"payload"`
}

// Duration is a time.Duration written as "20us", "1.5ms", "1s" (Go syntax, no space).
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// The allowed values of each enumeration, in the order error messages list them.
func (Backend) choices() []string { return []string{string(BackendSim), string(BackendBCM2835)} }
func (Delivery) choices() []string {
	return []string{string(DeliveryAuto), string(DeliveryThread), string(DeliveryOwner), string(DeliveryInline)}
}
func (ClockSource) choices() []string {
	return []string{string(ClockSourceAuto), string(ClockSourceRuntime), string(ClockSourceSystemTimer)}
}
func (SimCPU) choices() []string {
	return []string{string(SimCPUStrict), string(SimCPUDedicated), string(SimCPUShared)}
}
func (SimBoard) choices() []string {
	return []string{string(SimBoardPiZero), string(SimBoardPi1), string(SimBoardPi2), string(SimBoardPi3), string(SimBoardPi4)}
}
func (SimKernelCost) choices() []string {
	return []string{string(SimKernelCostBoard), string(SimKernelCostUserFactor)}
}
func (SimHostNoise) choices() []string {
	return []string{string(SimHostNoiseClip), string(SimHostNoiseCharge)}
}
func (Mode) choices() []string {
	return []string{string(ModeNormal), string(ModeListenOnly), string(ModeLoopback)}
}
func (InterfaceKind) choices() []string {
	return []string{string(KindVCAN), string(KindVXCAN), string(KindSLCAN), string(KindNone)}
}
func (SimPeerKind) choices() []string {
	return []string{string(PeerPeriodic), string(PeerAnswer), string(PeerLoad), string(PeerErrors)}
}
func (SimPayload) choices() []string {
	return []string{string(PayloadCounter), string(PayloadStuffMin), string(PayloadStuffMax)}
}
