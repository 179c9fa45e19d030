package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"cand/bench"
	"cand/bench/report"
	"cand/config"
)

// A tiny run end to end: one pipeline scenario and one transfer size, written to
// disk. The JSON holds the scenario, stage and transfer fields, and the SVG is
// well-formed XML.
// Numbers are not judged here (timing claims belong to the benchmark itself).
func TestTinyRunWritesJSONAndSVG(t *testing.T) {
	sc := bench.Scenario{Name: "tiny", Bitrate: 1_000_000, LoadPercent: 100, DLC: 8,
		IntPollWindow: bench.DefaultIntPollWindow, Duration: 300 * time.Millisecond, Rule: config.SimCPUStrict}
	rep, err := bench.Run(context.Background(), []bench.Scenario{sc}, 50, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	rep.Transfers = rep.Transfers[:1] // 2 bytes is enough here
	dir := t.TempDir()
	jsonPath, svgPath, err := report.Write(rep, dir)
	if err != nil {
		t.Fatal(err)
	}

	raw, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", jsonPath, err)
	}
	scens, _ := doc["scenarios"].([]any)
	if len(scens) != 1 {
		t.Fatalf("scenarios = %v, want one", doc["scenarios"])
	}
	s := scens[0].(map[string]any)
	for _, k := range []string{"name", "bitrate", "load_percent", "duration_s", "frames_offered", "frames_received",
		"frames_lost", "spi_transfers_per_rx_frame", "spi_bytes_per_rx_frame", "allocs_per_frame", "cpu_us_per_frame", "stages",
		"shared_cpu", "board", "clock_rule", "sim_clock"} {
		if _, ok := s[k]; !ok {
			t.Errorf("scenario lacks %q", k)
		}
	}
	if s["name"] != "tiny" || s["bitrate"] != float64(1_000_000) || s["load_percent"] != float64(100) {
		t.Errorf("scenario name/bitrate/load = %v/%v/%v, want tiny/1000000/100", s["name"], s["bitrate"], s["load_percent"])
	}
	if s["frames_received"].(float64) == 0 {
		t.Error("no frame received in 300 ms at 100 % load")
	}
	// The factor over the run, from the owner's calibration bursts, where the
	// clock bound the owner (it charged its running).
	clk := s["sim_clock"].(map[string]any)
	if clk["charged_ms"].(map[string]any)["cpu_scaled"].(float64) > 0 {
		f, _ := clk["cpu_factor_over_run"].(map[string]any)
		h, _ := clk["host_kernel_ns_over_run"].(map[string]any)
		if clk["calibration_bursts"].(float64) < 1 || f == nil || h == nil ||
			!(1 <= f["min"].(float64) && f["min"].(float64) <= f["median"].(float64) && f["median"].(float64) <= f["max"].(float64)) ||
			!(0 < h["min"].(float64) && h["min"].(float64) <= h["median"].(float64) && h["median"].(float64) <= h["max"].(float64)) {
			t.Errorf("calibration over the run: %v bursts, factor %v, host kernel ns %v: want bursts and min ≤ median ≤ max",
				clk["calibration_bursts"], f, h)
		}
		if _, ok := clk["removed_ms"].(map[string]any)["calibration"]; !ok {
			t.Errorf("removed_ms lacks calibration: %v", clk["removed_ms"])
		}
	}
	stages, _ := s["stages"].(map[string]any)
	for _, name := range []string{"int_to_handler", "handler_to_cs", "rx_end_to_end", "int_handled", "tx_socket_to_rts", "tx_socket_to_done"} {
		st, ok := stages[name].(map[string]any)
		if !ok {
			t.Errorf("stages lacks %q", name)
			continue
		}
		for _, k := range []string{"clock", "p50_us", "p90_us", "p99_us", "p999_us", "max_us", "count"} {
			if _, ok := st[k]; !ok {
				t.Errorf("stage %s lacks %q", name, k)
			}
		}
	}
	xfers, _ := doc["transfers"].([]any)
	if len(xfers) != 1 {
		t.Fatalf("transfers = %v, want one", doc["transfers"])
	}
	x := xfers[0].(map[string]any)
	for _, k := range []string{"bytes", "wire_us", "poll_p50_us", "sleep_p50_us", "poll_p99_us", "sleep_p99_us"} {
		if _, ok := x[k]; !ok {
			t.Errorf("transfer lacks %q", k)
		}
	}
	if x["bytes"] != float64(2) {
		t.Errorf("transfer bytes = %v, want 2", x["bytes"])
	}

	svg, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var root string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", svgPath, err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}

	var md strings.Builder
	report.Markdown(&md, rep)
	for _, want := range []string{"| tiny | 1000000 | 100 | 500 µs |  | pi3 strict |", "| tiny | rx_end_to_end | board |", "| tiny | board_int_low | board |",
		"| 2 | 50 |", "### Targets", "### Host time taken out of the virtual Pi's time", "| tiny | pi3 strict | ",
		"| calibration | host noise | longest µs |", "| factor over the run |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, md.String())
		}
	}
}

// A DLC below 8 cannot carry the counter losses are measured with: refused, with
// the reason.
func TestScenarioNeedsEightDataBytes(t *testing.T) {
	_, err := bench.RunScenario(context.Background(), bench.Scenario{Name: "short", Bitrate: 500_000, LoadPercent: 100, DLC: 4, Duration: time.Second}, nil)
	if err == nil || !strings.Contains(err.Error(), "need 8 data bytes") {
		t.Fatalf("err = %v, want the dlc refused", err)
	}
}

// A burst scenario: three peers in lockstep offer three frames per period, they
// arrive (how many is timing, which the benchmark reports, not this test), and the burst section (JSON and table) says how many
// interrupts and SPI transfers a burst took, next to Reference3x7's 7.
func TestBurstScenario(t *testing.T) {
	sc := bench.Scenario{Name: "burst", Bitrate: 1_000_000, Period: 2 * time.Millisecond, Burst: 3, DLC: 8,
		IntPollWindow: bench.DefaultIntPollWindow, Duration: 300 * time.Millisecond, Rule: config.SimCPUStrict}
	res, err := bench.RunScenario(context.Background(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.FramesOffered == 0 || res.FramesOffered%3 != 0 || res.FramesReceived == 0 || res.FramesReceived+res.FramesLost != res.FramesOffered {
		t.Fatalf("offered %d received %d lost %d: want a non-zero multiple of 3 offered, received + lost = offered",
			res.FramesOffered, res.FramesReceived, res.FramesLost)
	}
	b := res.Burst
	if b == nil || b.FramesPerBurst != 3 || b.Bursts == 0 || b.InterruptsPerBurst == 0 || b.SPITransfersPerBurst == 0 ||
		b.Reference.SPITransfers != 7 || b.Reference.Messages != 3 {
		t.Fatalf("burst = %+v", b)
	}
	raw, err := json.Marshal(&bench.Report{Scenarios: []bench.ScenarioResult{res}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"burst":{"frames_per_burst":3`, `"interrupts_per_burst":`, `"spi_transfers_per_burst":`,
		`"int_handled_p99_us":`, `"reference":{"messages":3,"spi_transfers":7,"handling_us_irq":215,"handling_us_polling":161.8`} {
		if !strings.Contains(string(raw), k) {
			t.Errorf("JSON lacks %s:\n%s", k, raw)
		}
	}
	var md strings.Builder
	report.Markdown(&md, &bench.Report{Scenarios: []bench.ScenarioResult{res}})
	if !strings.Contains(md.String(), "| burst | 3 | 2000 |") || !strings.Contains(md.String(), "| 7 | 215 → 161.8 |") {
		t.Errorf("table lacks the burst row:\n%s", md.String())
	}
	t.Logf("%+v", *b)
}

// A burst needs periodic peers: a load scenario with a burst is refused.
func TestBurstNeedsPeriodicPeers(t *testing.T) {
	_, err := bench.RunScenario(context.Background(), bench.Scenario{Name: "x", Bitrate: 500_000, LoadPercent: 50, Burst: 3, DLC: 8, Duration: time.Second}, nil)
	if err == nil || !strings.Contains(err.Error(), "set load_percent 0") {
		t.Fatalf("err = %v, want the burst refused", err)
	}
}

// The zero-loss target is judged on the dedicated-CPU virtual Pi, counts RX
// overflows as well as lost frames, and leaves the shared-CPU comparison out.
func TestZeroLossTarget(t *testing.T) {
	base := bench.ScenarioResult{Bitrate: 1_000_000, LoadPercent: 100, IntPollWindowUs: 500, DurationS: 60, RXFigures: bench.RXFigures{FramesOffered: 1000, FramesReceived: 1000}}
	ok, overflow, shared := base, base, base
	ok.Name, overflow.Name, shared.Name = "ok", "overflow", "shared"
	overflow.RXOverflows = 1
	shared.SharedCPU, shared.FramesLost = true, 5
	var got []string
	for _, tg := range bench.Targets(&bench.Report{Scenarios: []bench.ScenarioResult{ok, overflow, shared}}) {
		if strings.HasPrefix(tg.Goal, "0 frames lost") {
			got = append(got, fmt.Sprintf("%s: %s: %v", tg.Goal, tg.Measured, tg.Met))
		}
	}
	want := []string{
		"0 frames lost, 0 RX overflows, 100 % load, 1 Mbit/s, 8-byte frames (ok, 60 s): 0 of 1000 lost, 0 overflows: true",
		"0 frames lost, 0 RX overflows, 100 % load, 1 Mbit/s, 8-byte frames (overflow, 60 s): 0 of 1000 lost, 1 overflows: false",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("targets:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The heartbeat target judges every 1 Mbit/s scenario under load that measured the
// heartbeat, on the board's clock with the host's beside it where they differ,
// and the TX latency target the tx-share workload's socket-to-RTS p99 against
// two of its frames' own times on the wire.
func TestHeartbeatAndTXTargets(t *testing.T) {
	fresh, stale, hostStale := 12.5, 61.0, 70.0
	full := bench.ScenarioResult{Name: "full", Bitrate: 1_000_000, LoadPercent: 100, HeartbeatMaxMs: &fresh, HeartbeatHostMaxMs: &fresh}
	old := bench.ScenarioResult{Name: "old", Bitrate: 1_000_000, LoadPercent: 100, HeartbeatMaxMs: &stale, HeartbeatHostMaxMs: &hostStale}
	unmeasured := bench.ScenarioResult{Name: "unmeasured", Bitrate: 1_000_000, LoadPercent: 100}
	share := bench.ScenarioResult{Name: "tx-share-1M", Bitrate: 1_000_000, HeartbeatMaxMs: &fresh,
		Traffic: bench.Traffic{Workload: "tx-share", BitsPerFrame: 120}, Stages: map[string]bench.Stage{"tx_socket_to_rts": {Clock: "board", Count: 100, P99: 240}}}
	slow := share
	slow.Name, slow.Stages = "slow", map[string]bench.Stage{"tx_socket_to_rts": {Clock: "board", Count: 100, P99: 240.5}}
	var got []string
	for _, tg := range bench.Targets(&bench.Report{Scenarios: []bench.ScenarioResult{full, old, unmeasured, share, slow}}) {
		if strings.HasPrefix(tg.Goal, "owner heartbeat") || strings.HasPrefix(tg.Goal, "TX socket") {
			got = append(got, fmt.Sprintf("%s: %s: %v", tg.Goal, tg.Measured, tg.Met))
		}
	}
	want := []string{
		"owner heartbeat never older than 50 ms under load (full, board clock): oldest 12.5 ms: true",
		"owner heartbeat never older than 50 ms under load (old, board clock): oldest 61.0 ms (host clock 70.0 ms): false",
		"TX socket → RTS p99 ≤ 2 frame times under RX load (tx-share-1M, board clock): p99 240.0 µs, limit 240.0 µs (120 bits a frame): true",
		"owner heartbeat never older than 50 ms under load (tx-share-1M, board clock): oldest 12.5 ms: true",
		"TX socket → RTS p99 ≤ 2 frame times under RX load (slow, board clock): p99 240.5 µs, limit 240.0 µs (120 bits a frame): false",
		"owner heartbeat never older than 50 ms under load (slow, board clock): oldest 12.5 ms: true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("targets:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The vehicle mix end to end: every frame of the filtered sender stays in the
// chip (cand's filters), while the kernel driver's way, which sets no filters,
// passes them up; frames are counted per sender, the remote frames included.
func TestVehicleWorkload(t *testing.T) {
	var sc bench.Scenario
	for _, s := range bench.Workloads(bench.Durations{Other: 400 * time.Millisecond}) {
		if s.Workload.Kind == "vehicle" && s.Kernel && s.Board == bench.KernelBoard {
			sc = s
		}
	}
	res, err := bench.RunScenario(context.Background(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.FramesOffered == 0 || res.FramesReceived+res.FramesLost < res.FramesOffered || res.FilteredOffered == 0 || res.FilterLeaks != 0 || res.StrayFrames != 0 {
		t.Fatalf("offered %d received %d lost %d, filtered %d leaked %d, stray %d", res.FramesOffered, res.FramesReceived, res.FramesLost,
			res.FilteredOffered, res.FilterLeaks, res.StrayFrames)
	}
	k := res.Kernel
	if k == nil || k.Error != "" || k.FramesOffered == 0 || k.Unfiltered == 0 || k.SPITransfersPerRXFrame <= res.SPITransfersPerRXFrame {
		t.Fatalf("kernel reference %+v (cand %.2f transfers per frame)", k, res.SPITransfersPerRXFrame)
	}
	var md strings.Builder
	report.Markdown(&md, &bench.Report{Scenarios: []bench.ScenarioResult{res}})
	for _, want := range []string{"| vehicle-500k-pi2 | 500000 | vehicle |", "### Workloads", "| vehicle-500k-pi2 | vehicle |", "### cand and the kernel driver's way, same workload"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("tables lack %q:\n%s", want, md.String())
		}
	}
}
