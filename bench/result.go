package bench

import (
	"encoding/json"
	"time"

	"cand/bench/transfer"
	"cand/metrics"
)

// Report is the JSON document a run writes.
type Report struct {
	// Board is the board the run was made on (board.go).
	Board     *BoardInfo        `json:"board,omitempty"`
	Scenarios []ScenarioResult  `json:"scenarios"`
	Transfers []transfer.Result `json:"transfers"`
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
	// SharedCPU: the virtual Pi ran on host time (hardware.sim_cpu: shared).
	SharedCPU bool `json:"shared_cpu"`
	// Board is the board profile the virtual Pi played (hardware.sim_board) and
	// ClockRule its clock's rule (hardware.sim_cpu): strict, dedicated (the
	// forgiving rule: the driver's own time is taken out of the board's) or
	// shared (host time, host speed). docs/clock.md, docs/boards.md.
	Board     string `json:"board"`
	ClockRule string `json:"clock_rule"`
	// Error, when set, is why the scenario stopped early (e.g. the daemon failed);
	// the figures then cover only what was measured before, or are zero.
	Error string `json:"error,omitempty"`
	// DurationS is the measured window in host time, BoardS the same window in
	// the board's time (the virtual Pi's, as its hardware reached it; 0 on a real
	// board): the frames offered are the bus's in the board's time, which under
	// the strict rule can run well ahead of or behind the host's.
	DurationS float64 `json:"duration_s"`
	BoardS    float64 `json:"board_s"`
	// WarmUpMs is the traffic run before the window, not counted (Scenario.WarmUp).
	WarmUpMs float64 `json:"warm_up_ms,omitempty"`
	// HeartbeatMaxMs is the oldest the owner thread's heartbeat got over the
	// window, sampled every ms, in the board's time: on a real board its host
	// time (what systemd's watchdog sees), on the virtual Pi the board's, which
	// leaves out what the host did to the owner thread and the simulator's own
	// waits (heartbeatWatch); nil if not measured. HeartbeatHostMaxMs is the
	// same in the host's time.
	HeartbeatMaxMs     *float64 `json:"owner_heartbeat_max_ms,omitempty"`
	HeartbeatHostMaxMs *float64 `json:"owner_heartbeat_max_host_ms,omitempty"`
	// RXFigures: the scenario's receive figures (the sums of its controllers'
	// when it has more than one).
	RXFigures
	// WireUsPerRXFrame is the SPI bytes per RX frame at one byte's wire time at
	// the board's highest core clock (its SCLK drops with the core clock when
	// the firmware lowers it).
	WireUsPerRXFrame float64 `json:"wire_us_per_rx_frame"`
	AllocsPerFrame   float64 `json:"allocs_per_frame"`
	CPUUsPerFrame    float64 `json:"cpu_us_per_frame"`
	PolledInterrupts uint64  `json:"polled_interrupts"`
	// Clock is what the virtual Pi's clock did to its time over the whole run.
	Clock ClockResult `json:"sim_clock"`
	// FirstLoss is the post-mortem of the window's first lost frame (package
	// bench/postmortem, added by Scenario.Observe; nil: off or nothing lost).
	FirstLoss json.RawMessage `json:"first_loss,omitempty"`
	// Stages are latency distributions, each in the clock its Clock names.
	Stages map[string]Stage `json:"stages"`
	// Burst is set for burst scenarios: Reference3x7's one interrupt with 3
	// messages / 7 transfers, side by side with what the daemon needed.
	Burst *BurstResult `json:"burst,omitempty"`
	// RXHistogram is the rx_end_to_end stage's classic buckets (for the SVG).
	RXHistogram []Bucket `json:"rx_end_to_end_buckets"`
	// Traffic: the workload's figures (traffic.go), flat in the JSON object.
	Traffic
}

// ClockResult is what the virtual Pi's clock did (sim/clock Stats) and the board
// it played (sim Board), in report units.
type ClockResult struct {
	Rule  string `json:"rule"`
	Board string `json:"board"`
	Model string `json:"model"`
	CPU   string `json:"cpu"`
	Cores int    `json:"cores"`
	// CPUFactor is board ns per host ns of the owner's own running at the end of
	// the run, at the ARM and core clocks then (the governor scales them).
	CPUFactor float64 `json:"cpu_factor"`
	ARMMHz    float64 `json:"arm_mhz"`
	CoreMHz   float64 `json:"core_mhz"`
	// CPUFactorRun is the factor over the run (min, median, max after each
	// calibration burst: it follows the host's speed and the ARM clock).
	CPUFactorRun Spread `json:"cpu_factor_over_run"`
	// The calibration: the kernel's time on this host when the board was built
	// (one shot) and on the board at that ARM clock, and the host's
	// park-and-hand-back of a locked thread.
	HostKernelNs  float64 `json:"host_kernel_ns"`
	BoardKernelNs float64 `json:"board_kernel_ns"`
	HostHandOffNs float64 `json:"host_handoff_ns"`
	// HostKernelNsRun is the kernel's time on this host over the run as the
	// owner thread's calibration bursts estimated it (CalibrationBursts of them;
	// sim/clock calib.go).
	HostKernelNsRun   Spread `json:"host_kernel_ns_over_run"`
	CalibrationBursts uint64 `json:"calibration_bursts"`
	// RemovedMs and Removals: host time taken out of the board's, by category
	// (runqueue, steal, park, wake_up, bus_late, register_model, stall,
	// kernel_outlier, calibration).
	RemovedMs    map[string]float64 `json:"removed_ms"`
	Removals     map[string]uint64  `json:"removals"`
	RemovedMaxUs float64            `json:"removed_max_us"`
	// ChargedMs: board time charged beyond host time for cand's own work (strict
	// rule), by kind (cpu_scaled, park, wake_up, shared_core, kernel: the owner's
	// system calls at the board's kernel cost, clock_read: its clock reads at the
	// board's cost of a read).
	ChargedMs map[string]float64 `json:"charged_ms"`
	// Stretches: the stretches of the owner's code that ran longest, by the
	// host-noise rule's keys (strict rule, sim_host_noise clip; OwnerStretches).
	Stretches []StretchResult `json:"owner_stretches,omitempty"`
	// SystemCalls: the owner thread's metered system calls by kind (strict rule).
	SystemCalls map[string]SystemCalls `json:"system_calls,omitempty"`
	ClockReads  int64                  `json:"clock_reads"`
	Parks       uint64                 `json:"parks"`
	WakeUps     uint64                 `json:"wake_ups"`
	// AheadMs is how far the board's time ended ahead of host time (negative:
	// behind).
	AheadMs float64 `json:"board_ahead_of_host_ms"`
	// ForgivingMs is what the forgiving dedicated rule would have removed from
	// the same gaps (strict rule; an indication).
	ForgivingMs float64 `json:"forgiving_rule_would_remove_ms"`
}

// StretchResult is one stretch of the owner's code between two register
// accesses (sim/clock Stretch): its user-code running in host ms over the run,
// and what the host-noise rule took out of it.
type StretchResult struct {
	From    string  `json:"from"`
	To      string  `json:"to"`
	Calls   uint32  `json:"system_calls"`
	Reads   uint32  `json:"clock_reads"`
	Gaps    int64   `json:"gaps"`
	RunMs   float64 `json:"run_ms"`
	NoiseMs float64 `json:"noise_ms"`
}

// OwnerStretches is how many stretches a result keeps.
const OwnerStretches = 10

// SystemCalls is one kind of the owner's metered system calls: how many, their
// host time and the board time they were charged.
type SystemCalls struct {
	Calls   uint64  `json:"calls"`
	HostMs  float64 `json:"host_ms"`
	BoardMs float64 `json:"board_ms"`
}

// Spread is a figure's least, median and greatest over a run.
type Spread struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// Stage clocks: what a latency distribution was measured in.
const (
	// ClockHost: host CLOCK_MONOTONIC (the SPI engine comparison, on an unbound
	// register model). On the virtual Pi such figures hold the host stalls the
	// board's clock takes out and miss the board's slower CPU.
	ClockHost = transfer.ClockHost
	// ClockBoard: the virtual Pi's time: the bridge's stage histograms (cand reads
	// the board's clock, daemon/hardware.go) and the board's own measures.
	ClockBoard = "board"
)

// Stage is one latency distribution in microseconds, in the clock Clock names.
type Stage struct {
	Clock string  `json:"clock"`
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

// Target is one of cand's goals and whether this run met it.
type Target struct {
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }

// stageOf is a stage in the board's time: the bridge's histograms, or one the
// virtual Pi measured itself.
func stageOf(s metrics.Snapshot) Stage {
	return Stage{Clock: ClockBoard, P50: us(s.P50), P90: us(s.P90), P99: us(s.P99), P999: us(s.P999), Max: us(s.Max), Count: s.Count}
}
