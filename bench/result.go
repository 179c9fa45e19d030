package bench

import (
	"time"

	"cand/metrics"
)

// Report is the JSON document a run writes.
type Report struct {
	// Board is the board the run was made on (board.go).
	Board     *BoardInfo       `json:"board,omitempty"`
	Scenarios []ScenarioResult `json:"scenarios"`
	Transfers []TransferResult `json:"transfers"`
	// Targets are cand's goals (Targets), each met or missed in this run.
	Targets []Target `json:"targets"`
}

// ScenarioResult is one full-pipeline scenario.
type ScenarioResult struct {
	Name            string  `json:"name"`
	Bitrate         uint32  `json:"bitrate"`
	LoadPercent     float64 `json:"load_percent"`
	DLC             uint8   `json:"dlc"`
	IntPollWindowUs float64 `json:"int_poll_window_us"`
	Stress          bool    `json:"stress"`
	// SharedCPU: the virtual Pi ran on host time (hardware.sim_cpu: shared);
	// otherwise the owner thread played a dedicated CPU (sim/clock).
	SharedCPU bool `json:"shared_cpu"`
	// Error, when set, is why the scenario stopped early (e.g. the daemon failed);
	// the figures then cover only what was measured before, or are zero.
	Error                  string  `json:"error,omitempty"`
	DurationS              float64 `json:"duration_s"`
	FramesOffered          uint64  `json:"frames_offered"`
	FramesReceived         uint64  `json:"frames_received"`
	FramesLost             uint64  `json:"frames_lost"`
	RXOverflows            uint64  `json:"rx_overflows"`
	SPITransfersPerRXFrame float64 `json:"spi_transfers_per_rx_frame"`
	SPIBytesPerRXFrame     float64 `json:"spi_bytes_per_rx_frame"`
	SPIByteNs              int64   `json:"spi_byte_ns"`
	WireUsPerRXFrame       float64 `json:"wire_us_per_rx_frame"`
	AllocsPerFrame         float64 `json:"allocs_per_frame"`
	CPUUsPerFrame          float64 `json:"cpu_us_per_frame"`
	PolledInterrupts       uint64  `json:"polled_interrupts"`
	// Clock is what the virtual Pi's clock took out of its time over the whole
	// run (zero with SharedCPU).
	Clock  ClockResult      `json:"sim_clock"`
	Stages map[string]Stage `json:"stages"`
	// Burst is set for burst scenarios: Reference3x7's one interrupt with 3
	// messages / 7 transfers, side by side with what the daemon needed.
	Burst *BurstResult `json:"burst,omitempty"`
	// RXHistogram is the rx_end_to_end stage's classic buckets (for the SVG).
	RXHistogram []Bucket `json:"rx_end_to_end_buckets"`
	// Traffic: the workload's figures (traffic.go), flat in the JSON object.
	Traffic
}

// ClockResult is sim/clock's Stats in report units.
type ClockResult struct {
	CPUStalls     uint64  `json:"cpu_stalls"`
	CPUStallMs    float64 `json:"cpu_stall_ms"`
	CPUStallMaxUs float64 `json:"cpu_stall_max_us"`
	RuntimeParks  uint64  `json:"runtime_parks"`
	SlowWakeUps   uint64  `json:"slow_wake_ups"`
	BusLate       uint64  `json:"bus_late"`
	BusLateMs     float64 `json:"bus_late_ms"`
}

// Stage is one latency distribution in microseconds.
type Stage struct {
	P50   float64 `json:"p50_us"`
	P90   float64 `json:"p90_us"`
	P99   float64 `json:"p99_us"`
	P999  float64 `json:"p999_us"`
	Max   float64 `json:"max_us"`
	Count uint64  `json:"count"`
}

// Bucket is one non-cumulative histogram bucket: Count observations in
// (previous bucket's UpperUs, UpperUs].
type Bucket struct {
	UpperUs float64 `json:"le_us"`
	Count   uint64  `json:"count"`
}

// TransferResult compares the SPI engine polling-first with sleeping for every
// transfer, CS-down → CS-up, for one transfer size.
type TransferResult struct {
	Bytes        int     `json:"bytes"`
	Transfers    int     `json:"transfers"`
	WireUs       float64 `json:"wire_us"`
	PollP50      float64 `json:"poll_p50_us"`
	SleepP50     float64 `json:"sleep_p50_us"`
	PollP99      float64 `json:"poll_p99_us"`
	SleepP99     float64 `json:"sleep_p99_us"`
	PollSlept    float64 `json:"poll_slept_fraction"`
	SleepSlept   float64 `json:"sleep_slept_fraction"`
	PollVsWire   float64 `json:"poll_p50_over_wire"`
	SleepVsPoll  float64 `json:"sleep_p50_over_poll_p50"`
	PollBudgetUs float64 `json:"poll_budget_us"`
}

// Target is one of cand's goals and whether this run met it.
type Target struct {
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }

func stageOf(s metrics.Snapshot) Stage {
	return Stage{P50: us(s.P50), P90: us(s.P90), P99: us(s.P99), P999: us(s.P999), Max: us(s.Max), Count: s.Count}
}
