// Package config is cand's YAML configuration: the schema, defaults, and validation
// with errors that name the file, the line and the key, and say what is allowed.
package config

import "time"

// Config is the whole file.
type Config struct {
	Hardware    Hardware     `yaml:"hardware"`
	Realtime    Realtime     `yaml:"realtime"`
	Metrics     Metrics      `yaml:"metrics"`
	Controllers []Controller `yaml:"controllers"`
}

// Backend selects where the registers are.
type Backend string

const (
	BackendSim     Backend = "sim"     // the virtual Pi (default)
	BackendBCM2835 Backend = "bcm2835" // real SPI0/GPIO registers through /dev/mem and /dev/gpiomem
)

// Hardware is the SoC side, shared by all controllers on SPI0.
type Hardware struct {
	Backend Backend `yaml:"backend"` // sim | bcm2835; default sim
	// CoreClockHz is the VPU core clock SPI0 divides. 0 = the board's highest
	// (so SCLK never exceeds the request). Set it when core_freq is pinned.
	CoreClockHz uint32 `yaml:"core_clock_hz"`
	// PollBudget is how long the SPI engine busy-polls for a transfer's end before it
	// sleeps; default 20µs (the reference measurements).
	PollBudget Duration `yaml:"poll_budget"`
	// GPIOChip is the character device for interrupt lines; default /dev/gpiochip0.
	GPIOChip string `yaml:"gpio_chip"`
	// AnalyzerPins are optional GPIOs toggled at stage boundaries for a logic analyzer.
	AnalyzerPins AnalyzerPins `yaml:"analyzer_pins"`
}

// AnalyzerPins: -1 (default) = off.
type AnalyzerPins struct {
	Interrupt   int `yaml:"interrupt"`    // high while the interrupt is handled
	SPI         int `yaml:"spi"`          // high while an SPI transfer runs
	SocketWrite int `yaml:"socket_write"` // high while a frame is written to the socket
}

// Realtime is the owner thread's scheduling.
type Realtime struct {
	// Priority is SCHED_FIFO 1..99 for the owner thread only; 0 = normal scheduling.
	// Default 40: below the kernel's IRQ threads (50), which deliver the GPIO edges.
	Priority int `yaml:"priority"`
	// CPU pins the owner thread; -1 (default) = no pinning.
	CPU int `yaml:"cpu"`
	// Mlockall locks the process's memory (default true).
	Mlockall *bool `yaml:"mlockall"`
}

// Metrics is the Prometheus endpoint.
type Metrics struct {
	// Listen is host:port for /metrics; default 127.0.0.1:9108; "" disables it.
	Listen *string `yaml:"listen"`
}

// Controller is one MCP2515 and its SocketCAN interface.
type Controller struct {
	Name string `yaml:"name"` // label in logs and metrics; default the interface name

	SPI SPI `yaml:"spi"`
	// IntGPIO is the BCM GPIO number of the MCP2515's INT output (required on bcm2835;
	// default 25, the PiCAN2/Waveshare wiring).
	IntGPIO int `yaml:"int_gpio"`
	// IntPollWindow busy-polls the INT level through the GPIO registers for this long
	// after each interrupt instead of waiting for the next edge; 0 (default) = off.
	IntPollWindow Duration `yaml:"int_poll_window"`
	// IntDebounce is the GPIO character device's debounce period; 0 (default) = off.
	IntDebounce Duration `yaml:"int_debounce"`

	OscillatorHz uint32 `yaml:"oscillator_hz"` // MCP2515 crystal, 1..25 MHz; default 16 MHz
	Bitrate      uint32 `yaml:"bitrate"`       // 10k..1M bit/s; required
	// SamplePoint in (0,1); 0 = the kernel's default for the bitrate.
	SamplePoint float64 `yaml:"sample_point"`
	// Timing, when set, gives the bit timing explicitly instead of computing it.
	Timing *Timing `yaml:"timing"`

	Mode           Mode `yaml:"mode"`            // normal | listen-only | loopback; default normal
	OneShot        bool `yaml:"one_shot"`        // no automatic retransmission
	TripleSampling bool `yaml:"triple_sampling"` // CNF2.SAM
	// ErrorFrames sends SocketCAN error frames (default true).
	ErrorFrames *bool `yaml:"error_frames"`
	// RestartMs restarts after bus-off after this many ms (like ip link restart-ms);
	// 0 = manual restart only. Default 100.
	RestartMs *uint32 `yaml:"restart_ms"`
	// TxTimeout aborts a frame that has not left after this long; default 1s; 0 = never.
	TxTimeout Duration `yaml:"tx_timeout"`

	Filters *Filters `yaml:"filters"` // nil = accept everything

	Interface Interface `yaml:"interface"`

	// Sim describes the simulated bus this controller sits on (backend sim only).
	Sim SimBus `yaml:"sim"`
}

// SPI is one device on SPI0.
type SPI struct {
	ClockHz uint32 `yaml:"clock_hz"` // requested SCLK, ≤ 10 MHz for the MCP2515; default 10 MHz
	Mode    uint8  `yaml:"mode"`     // 0..3 (the MCP2515 supports 0 and 3); default 0
	// ChipSelect: "ce0" (default), "ce1", or "gpioN" for any GPIO as chip select.
	ChipSelect string `yaml:"chip_select"`
	// CSActiveHigh inverts the chip select (an MCP2515 needs active-low).
	CSActiveHigh bool `yaml:"cs_active_high"`
}

// Mode is the controller's operating mode.
type Mode string

const (
	ModeNormal     Mode = "normal"
	ModeListenOnly Mode = "listen-only"
	ModeLoopback   Mode = "loopback"
)

// Timing is an explicit bit timing: either the three CNF bytes, or the segments.
type Timing struct {
	CNF1 *uint8 `yaml:"cnf1"`
	CNF2 *uint8 `yaml:"cnf2"`
	CNF3 *uint8 `yaml:"cnf3"`

	BRP       uint32 `yaml:"brp"`        // 1..64
	PropSeg   uint32 `yaml:"prop_seg"`   // 1..8 TQ
	PhaseSeg1 uint32 `yaml:"phase_seg1"` // 1..8 TQ
	PhaseSeg2 uint32 `yaml:"phase_seg2"` // 2..8 TQ
	SJW       uint32 `yaml:"sjw"`        // 1..4 TQ
}

// Filters are the MCP2515's acceptance masks and filters. RXB0 uses Mask0 with
// filters 0..1, RXB1 uses Mask1 with filters 2..5 (datasheet §4.5).
type Filters struct {
	Mask0    Filter   `yaml:"mask0"`
	Mask1    Filter   `yaml:"mask1"`
	Filters  []Filter `yaml:"filters"`  // up to 6: RXF0..RXF5
	Rollover *bool    `yaml:"rollover"` // RXB0 → RXB1 when RXB0 is full (default true)
}

// Filter is an identifier (or mask) and whether it is extended.
type Filter struct {
	ID       uint32 `yaml:"id"`
	Extended bool   `yaml:"extended"`
}

// InterfaceKind is the virtual SocketCAN interface type.
type InterfaceKind string

const (
	KindVCAN  InterfaceKind = "vcan"
	KindVXCAN InterfaceKind = "vxcan"
)

// Interface is the SocketCAN side.
type Interface struct {
	Name string        `yaml:"name"` // default can0 (vcan0 on the sim backend)
	Kind InterfaceKind `yaml:"kind"` // vcan (default) | vxcan
	// Peer is the vxcan peer's name (kind vxcan); default <name>-peer... see docs.
	Peer string `yaml:"peer"`
	// RcvBuf is the socket receive buffer in bytes (SO_RCVBUFFORCE): the TX back-pressure
	// queue, since a vcan never blocks its senders. Default 4 MiB.
	RcvBuf int `yaml:"rcvbuf"`
}

// SimBus is the simulated CAN bus a controller sits on.
type SimBus struct {
	Peers []SimPeer `yaml:"peers"`
}

// SimPeerKind selects a peer's behaviour.
type SimPeerKind string

const (
	PeerPeriodic SimPeerKind = "periodic" // sends frames with a counter every Period
	PeerAnswer   SimPeerKind = "answer"   // answers each received frame: same data, ID + IDOffset
	PeerLoad     SimPeerKind = "load"     // saturates the bus at LoadPercent
)

// SimPeer is one node on the simulated bus.
type SimPeer struct {
	Kind     SimPeerKind `yaml:"kind"`
	Name     string      `yaml:"name"`
	IDs      []uint32    `yaml:"ids"`       // periodic/load: IDs sent in turn
	Extended bool        `yaml:"extended"`  // periodic/load: IDs are 29-bit
	Period   Duration    `yaml:"period"`    // periodic: default 100ms
	DLC      *uint8      `yaml:"dlc"`       // periodic/load: 0..8, default 8; data = counter (big-endian) then pattern
	IDOffset uint32      `yaml:"id_offset"` // answer: default 1
	// LoadPercent: load peer's share of bus time, 1..100.
	LoadPercent float64 `yaml:"load_percent"`
}

// Duration is a time.Duration written as "20us", "10ms", "1s".
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }
