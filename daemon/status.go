package daemon

import (
	"strings"
	"sync/atomic"

	"cand/canstate"
	"cand/metrics"
)

// StatusSchemaVersion is the status document's schema_version. It changes when a
// field changes its meaning or goes away; fields may be added without a change.
const StatusSchemaVersion = 1

// Status is the document `cand status` shows (docs/status.md): per controller what
// `ip -details -statistics link show` shows of a kernel CAN interface. Every
// number is read from the metrics /metrics exports at the moment of the request.
type Status struct {
	SchemaVersion int    `json:"schema_version"`
	Version       string `json:"version"` // cand's version
	// ClockSource is the clock latencies and deadlines are read from: runtime
	// or system_timer (docs/clock-source.md).
	ClockSource string             `json:"clock_source"`
	Controllers []ControllerStatus `json:"controllers"`
}

// ControllerStatus is one controller.
type ControllerStatus struct {
	Name      string `json:"name"`
	Interface string `json:"interface"`
	// State is ERROR-ACTIVE, ERROR-WARNING, ERROR-PASSIVE or BUS-OFF
	// (cand_bus_state), or STOPPED while the link is down (cand_link_up 0).
	State       string      `json:"state"`
	LinkUp      bool        `json:"link_up"` // cand_link_up
	ChipUp      bool        `json:"chip_up"` // cand_chip_up: false while the MCP2515 is missing
	BerrCounter BerrCounter `json:"berr_counter"`
	RestartMs   uint32      `json:"restart_ms"` // bus-off restart delay; 0 = manual (SIGUSR1)

	BitTiming    BitTimingStatus `json:"bit_timing"`    // cand_bit_timing_info
	OscillatorHz uint32          `json:"oscillator_hz"` // the MCP2515's crystal
	SCLKHz       int64           `json:"sclk_hz"`       // cand_spi_clock_hertz

	RX     RXStats    `json:"rx"`
	TX     TXStats    `json:"tx"`
	Errors ErrorStats `json:"errors"`
	BusOff uint64     `json:"bus_off"` // cand_bus_off_total
	// Restarts are the bus-off restarts done: every bus-off but the one the
	// controller is still in.
	Restarts   uint64 `json:"restarts"`
	ChipResets uint64 `json:"chip_resets"` // cand_chip_resets_total

	BusLoad BusLoad        `json:"bus_load"`
	Latency []StageLatency `json:"latency"` // cand_stage_latency_seconds, in the order /metrics has them
}

// BerrCounter is the MCP2515's error counters (cand_tec, cand_rec).
type BerrCounter struct {
	TX int64 `json:"tx"`
	RX int64 `json:"rx"`
}

// BitTimingStatus is the bit timing in the kernel's terms.
type BitTimingStatus struct {
	Bitrate     uint32  `json:"bitrate"`      // bit/s
	SamplePoint float64 `json:"sample_point"` // fraction of the bit, e.g. 0.875
	TQNs        uint32  `json:"tq_ns"`
	PropSeg     uint32  `json:"prop_seg"` // TQ
	PhaseSeg1   uint32  `json:"phase_seg1"`
	PhaseSeg2   uint32  `json:"phase_seg2"`
	SJW         uint32  `json:"sjw"`
	BRP         uint32  `json:"brp"` // the kernel's prescaler: TQ = brp·2/oscillator
	// From is where the bitrate came from: "configuration", or "ip link" (`ip link
	// set NAME type can bitrate` on a slcan interface).
	From string `json:"from"`
}

// Traffic is what went one way between the bus and the interface: frames, their
// data bytes and their bit times on the wire (stuffing and intermission
// included), from cand_rx_* or cand_tx_* frames_total, bytes_total and
// bit_times_total.
type Traffic struct {
	Frames   uint64 `json:"frames"`
	Bytes    uint64 `json:"bytes"`
	BitTimes uint64 `json:"bit_times"`
}

// RXStats is the traffic from the bus to the interface.
type RXStats struct {
	Traffic             // cand_rx_frames_total, cand_rx_bytes_total, cand_rx_bit_times_total
	Overflows    uint64 `json:"overflows"`     // cand_rx_overflows_total
	SocketErrors uint64 `json:"socket_errors"` // cand_rx_socket_errors_total
	RingDrops    uint64 `json:"ring_drops"`    // cand_rx_ring_drops_total
}

// TXStats is the traffic from the interface to the bus.
type TXStats struct {
	Traffic            // cand_tx_frames_total, cand_tx_bytes_total, cand_tx_bit_times_total
	Dropped     uint64 `json:"dropped"`      // cand_tx_dropped_total
	SocketDrops uint64 `json:"socket_drops"` // cand_socket_drops_total
	Invalid     uint64 `json:"invalid"`      // cand_tx_invalid_total
}

// ErrorStats counts errors.
type ErrorStats struct {
	ErrorFrames   uint64 `json:"error_frames"`   // cand_error_frames_total
	MessageErrors uint64 `json:"message_errors"` // cand_message_errors_total
	SPIErrors     uint64 `json:"spi_errors"`     // cand_spi_errors_total
}

// BusLoad is the share of the bitrate the frames took over the last interval, as
// can-utils' canbusload shows it: bit times (stuffing and intermission included)
// over bitrate × interval, in percent.
type BusLoad struct {
	IntervalSeconds float64 `json:"interval_seconds"`
	RXPercent       float64 `json:"rx_percent"`
	TXPercent       float64 `json:"tx_percent"`
	TotalPercent    float64 `json:"total_percent"`
}

// StageLatency is one stage's latency: its observations, and the median and 99th
// percentile as the upper edge of their histogram bucket (at most 9 % high, never
// above the largest observation). Both are 0 without observations.
type StageLatency struct {
	Stage      string  `json:"stage"`
	Count      uint64  `json:"count"`
	P50Seconds float64 `json:"p50_seconds"`
	P99Seconds float64 `json:"p99_seconds"`
}

// statusSource is what one controller's status is read from.
type statusSource struct {
	m    *metrics.Controller
	conf atomic.Pointer[sourceConf] // replaced when a reload reprograms the controller
}

// sourceConf is what a controller is configured with, as its status shows it.
type sourceConf struct {
	timing    metrics.BitTiming // as cand_bit_timing_info exports it
	restartMs uint32
	// bitrateFrom says where the bitrate in force came from: "" (the
	// configuration) or bitrateFromIPLink.
	bitrateFrom string
}

// bitrateFromIPLink marks a bitrate set on a slcan interface with `ip link`,
// which wins over the configuration's while cand runs.
const bitrateFromIPLink = "ip link"

// StateName is the state `cand status` shows, in the words of `ip -details link
// show`: STOPPED while the link is down, otherwise the bus state in capitals.
func StateName(linkUp bool, s canstate.State) string {
	if !linkUp {
		return "STOPPED"
	}
	return strings.ToUpper(s.String())
}

// read returns the controller's status with load as its bus load.
func (s *statusSource) read(load BusLoad) ControllerStatus {
	c := s.conf.Load()
	m, t := s.m, &c.timing
	linkUp := m.LinkUp.Load() == 1
	state := canstate.State(m.BusState.Load())
	busOffs := m.BusOffs.Load()
	restarts := busOffs
	if state == canstate.BusOff && restarts > 0 {
		restarts--
	}
	st := ControllerStatus{
		Name:        m.Name(),
		Interface:   m.Interface(),
		State:       StateName(linkUp, state),
		LinkUp:      linkUp,
		ChipUp:      m.ChipUp.Load() == 1,
		BerrCounter: BerrCounter{TX: m.TEC.Load(), RX: m.REC.Load()},
		RestartMs:   c.restartMs,
		BitTiming: BitTimingStatus{
			Bitrate: t.Bitrate, SamplePoint: float64(t.SamplePoint) / 1000, TQNs: t.TQ,
			PropSeg: t.PropSeg, PhaseSeg1: t.PhaseSeg1, PhaseSeg2: t.PhaseSeg2, SJW: t.SJW, BRP: t.BRP,
			From: bitrateFrom(c.bitrateFrom),
		},
		OscillatorHz: t.OscillatorHz,
		SCLKHz:       m.SCLKHz.Load(),
		RX: RXStats{
			Traffic:   Traffic{Frames: m.RXFrames.Load(), Bytes: m.RXBytes.Load(), BitTimes: m.RXBits.Load()},
			Overflows: m.RXOverflows.Load(), SocketErrors: m.SocketWriteErrs.Load(), RingDrops: m.RXRingDrops.Load(),
		},
		TX: TXStats{
			Traffic: Traffic{Frames: m.TXFrames.Load(), Bytes: m.TXBytes.Load(), BitTimes: m.TXBits.Load()},
			Dropped: m.TXDropped.Load(), SocketDrops: m.SocketDrops.Load(), Invalid: m.TXInvalid.Load(),
		},
		Errors:     ErrorStats{ErrorFrames: m.ErrorFrames.Load(), MessageErrors: m.MessageErrors.Load(), SPIErrors: m.SPIErrors.Load()},
		BusOff:     busOffs,
		Restarts:   restarts,
		ChipResets: m.ChipResets.Load(),
		BusLoad:    load,
	}
	for _, stage := range m.Stages() {
		snap := stage.H.Snapshot()
		st.Latency = append(st.Latency, StageLatency{
			Stage: stage.Name, Count: snap.Count, P50Seconds: snap.P50.Seconds(), P99Seconds: snap.P99.Seconds(),
		})
	}
	return st
}

func bitrateFrom(from string) string {
	if from == "" {
		return "configuration"
	}
	return from
}
