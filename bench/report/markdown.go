package report

import (
	"fmt"
	"io"
	"strings"

	"cand/bench"
)

// Markdown writes rep as Markdown tables: scenarios, stage latencies, SPI engine
// transfers and targets.
func Markdown(w io.Writer, rep *bench.Report) {
	boardLine(w, rep)
	if len(rep.Scenarios) > 0 {
		tableHead(w, pipelineHeading(rep),
			"s: the measured window in host time; board s: the same window in the board's time, in which the bus offered its frames. Board and clock rule: the board the virtual Pi played and its clock's rule — strict (cand's own time charged at the board's speed; only the host's runqueue, steal and slow wake-ups removed), dedicated (**forgiving**: the driver's own time, Go runtime parks and GC taken out, host speed; for comparison only) or shared (host time, host speed). docs/clock.md, docs/boards.md.",
			"| scenario | bitrate | load % | INT poll window | stress | board, clock rule | s | board s | offered | received | lost | overflows | SPI xfers/RX frame | SPI bytes/RX frame | wire µs/RX frame | allocs/frame | CPU µs/frame | polled INTs |",
			"|---|---:|---:|---:|:---:|:---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, s := range rep.Scenarios {
			load := fmt.Sprintf("%g", s.LoadPercent)
			if s.Workload != "" {
				load = s.Workload // the workloads table below
			} else if s.LoadPercent == 0 {
				load = "isolated"
				if s.Burst != nil {
					load = fmt.Sprintf("bursts of %d", s.Burst.FramesPerBurst)
				}
			}
			win := "off"
			if s.IntPollWindowUs > 0 {
				win = fmt.Sprintf("%g µs", s.IntPollWindowUs)
			}
			stress := ""
			if s.Stress {
				stress = "yes"
			}
			fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %.1f | %.1f | %d | %d | %d | %d | %.2f | %.1f | %.1f | %.4f | %.1f | %d |\n",
				s.Name, s.Bitrate, load, win, stress, simCPU(s), s.DurationS, s.BoardS, s.FramesOffered, s.FramesReceived, s.FramesLost,
				s.RXOverflows, s.SPITransfersPerRXFrame, s.SPIBytesPerRXFrame, s.WireUsPerRXFrame, s.AllocsPerFrame,
				s.CPUUsPerFrame, s.PolledInterrupts)
		}
		for _, s := range rep.Scenarios {
			if s.Error != "" {
				fmt.Fprintf(w, "\n**%s failed:** %s\n", s.Name, s.Error)
			}
		}
		fmt.Fprintln(w)
		clockTables(w, rep)
		tableHead(w, "Stage latencies (µs)",
			"Clock: board = the virtual Pi's time, which cand's own stamps (the bridge's histograms) are read in as on a real Pi, and the board's own measure (board_int_low: INT asserted → released).",
			"| scenario | stage | clock | count | p50 | p90 | p99 | p99.9 | max |",
			"|---|---|:---:|---:|---:|---:|---:|---:|---:|")
		for _, s := range rep.Scenarios {
			for _, name := range stageOrder(s.Stages) {
				st := s.Stages[name]
				if st.Count == 0 {
					continue
				}
				fmt.Fprintf(w, "| %s | %s | %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f |\n",
					s.Name, name, st.Clock, st.Count, st.P50, st.P90, st.P99, st.P999, st.Max)
			}
		}
		fmt.Fprintln(w)
	}
	workloadTables(w, rep)
	burstTable(w, rep)
	if len(rep.Transfers) > 0 {
		fmt.Fprintln(w, "### SPI engine: polling-first vs sleeping for every transfer (CS-down → CS-up, µs, host clock: the engine alone on an unbound register model)")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| bytes | transfers | wire | poll p50 | poll p99 | sleep p50 | sleep p99 | poll p50 / wire | sleep p50 / poll p50 | poll slept | sleep slept |")
		fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, x := range rep.Transfers {
			fmt.Fprintf(w, "| %d | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f× | %.1f× | %.0f %% | %.0f %% |\n",
				x.Bytes, x.Transfers, x.WireUs, x.PollP50, x.PollP99, x.SleepP50, x.SleepP99, x.PollVsWire, x.SleepVsPoll,
				100*x.PollSlept, 100*x.SleepSlept)
		}
		fmt.Fprintln(w)
	}
	if len(rep.Targets) > 0 {
		fmt.Fprintln(w, "### Targets")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| goal | measured | |")
		fmt.Fprintln(w, "|---|---|---|")
		for _, t := range rep.Targets {
			mark := "missed"
			if t.Met {
				mark = "met"
			}
			fmt.Fprintf(w, "| %s | %s | **%s** |\n", t.Goal, t.Measured, mark)
		}
		fmt.Fprintln(w)
	}
}

// simCPU is the scenario's board and clock rule, the forgiving rule marked.
func simCPU(s bench.ScenarioResult) string {
	rule := s.ClockRule
	if rule == "dedicated" {
		rule = "dedicated (forgiving)"
	}
	return strings.TrimSpace(s.Board + " " + rule)
}

// clockTables writes what the virtual Pi's clock did in each scenario: the board
// and its clocks, the host time it removed by category, and the board time it
// charged for cand's own work.
func clockTables(w io.Writer, rep *bench.Report) {
	tableHead(w, "The virtual Pi's board and clock (sim, sim/clock)",
		"CPU factor: board ns per host ns of the owner thread's own running, at the ARM clock at the end of the run (board kernel ns / host kernel ns now), and its least, median and greatest over the run (it follows the host's speed, from the owner thread's calibration bursts, and the ARM clock). Host kernel ns: once when the board was built, and over the run from the bursts (min … median … max). Board ahead: how far the board's time ended ahead of host time. Forgiving rule: what the dedicated rule would have removed from the same gaps.",
		"| scenario | board, clock rule | cores | CPU factor | factor over the run | ARM MHz | core MHz | host kernel ns at build | host kernel ns over the run | bursts | board kernel ns | host hand-off µs | board ahead ms | forgiving rule would remove ms |",
		"|---|:---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, s := range rep.Scenarios {
		c := s.Clock
		fmt.Fprintf(w, "| %s | %s | %d | %.2f | %s | %.0f | %.0f | %.0f | %s | %d | %.0f | %.1f | %.1f | %.1f |\n",
			s.Name, simCPU(s), c.Cores, c.CPUFactor, spread(c.CPUFactorRun, "%.2f"), c.ARMMHz, c.CoreMHz, c.HostKernelNs,
			spread(c.HostKernelNsRun, "%.0f"), c.CalibrationBursts, c.BoardKernelNs, c.HostHandOffNs/1e3, c.AheadMs, c.ForgivingMs)
	}
	fmt.Fprintln(w)
	tableHead(w, "Host time taken out of the virtual Pi's time, and board time charged (ms)",
		"Removed: runqueue (the owner runnable, not running), steal (the hypervisor had its vCPU), park (a Go runtime park's host time; its board cost is charged), wake-up (the host's wake-up path; the board's is charged), register model (the model's host time beyond the board's access time), bus late (the bus thread woken late), stall (dedicated rule: any gap without a wait), kernel outlier (strict rule: a system call's CPU time far beyond the median gap's, docs/clock.md), calibration (strict rule: the owner thread's calibration bursts, the simulator's own time, docs/boards.md), host noise (strict rule, sim_host_noise clip: running far beyond the median of the same stretch of code, docs/clock.md). Charged: the owner's running × (factor − 1), the board's parks and wake-ups, the other threads on a one-core board, its system calls at the board's kernel cost and its clock reads at the board's cost of a read, each beyond their host time (negative: the host was slower).",
		"| scenario | board, clock rule | removed: runqueue | steal | park | wake-up | register model | bus late | stall | kernel outlier | calibration | host noise | longest µs | charged: CPU × factor | parks | wake-ups | shared core | system calls | clock reads |",
		"|---|:---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	removed := []string{"runqueue", "steal", "park", "wake_up", "register_model", "bus_late", "stall", "kernel_outlier", "calibration", "host_noise"}
	charged := []string{"cpu_scaled", "park", "wake_up", "shared_core", "kernel", "clock_read"}
	for _, s := range rep.Scenarios {
		c := s.Clock
		fmt.Fprintf(w, "| %s | %s |", s.Name, simCPU(s))
		for _, k := range removed {
			fmt.Fprintf(w, " %.1f |", c.RemovedMs[k])
		}
		fmt.Fprintf(w, " %.0f |", c.RemovedMaxUs)
		for _, k := range charged {
			fmt.Fprintf(w, " %.1f |", c.ChargedMs[k])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

// spread writes a figure's min … median … max in format f ("–": not recorded).
func spread(s bench.Spread, f string) string {
	if s == (bench.Spread{}) {
		return "–"
	}
	return fmt.Sprintf(f+" … "+f+" … "+f, s.Min, s.Median, s.Max)
}

// tableHead writes a section's title and note, and a table's header and
// alignment rows.
func tableHead(w io.Writer, title, note, header, align string) {
	fmt.Fprintf(w, "### %s\n\n%s\n\n%s\n%s\n", title, note, header, align)
}

// stageOrder lists the named stages first, then the board's own, then the SPI
// transfer kinds.
func stageOrder(m map[string]bench.Stage) []string {
	var out []string
	for _, n := range bench.StageNames {
		if _, ok := m[n]; ok {
			out = append(out, n)
		}
	}
	if _, ok := m["board_int_low"]; ok {
		out = append(out, "board_int_low")
	}
	var spi []string
	for n := range m {
		if strings.HasPrefix(n, "spi_") {
			spi = append(spi, n)
		}
	}
	sortStrings(spi)
	return append(out, spi...)
}

// burstTable writes the burst scenarios next to Reference3x7's one interrupt with
// 3 messages and 7 transfers.
func burstTable(w io.Writer, rep *bench.Report) {
	var any bool
	for _, s := range rep.Scenarios {
		if s.Burst == nil {
			continue
		}
		if !any {
			any = true
			r := bench.Reference3x7
			fmt.Fprintf(w, "### Bursts of back-to-back frames vs the kernel driver's one interrupt with %d messages / %d transfers\n\n", r.Messages, r.SPITransfers)
			fmt.Fprintf(w, "Reference (the kernel's mcp251x and spi-bcm2835 on a Pi 2, %s): %d messages in one interrupt, %d SPI transfers; %s %.0f µs → %.1f µs as SPI polling grew longer; first CS-down → last CS-up %.1f µs → %.1f µs. "+
				"Here each interrupt is counted separately: int_handled is per interrupt (INT edge, or the poll window seeing INT, → INT high again); handling µs/burst = interrupts/burst × int_handled p50.\n\n",
				r.Source, r.Messages, r.SPITransfers, r.HandlingDefinition, r.HandlingUsIRQ, r.HandlingUsPolling, r.CSSpanUsIRQ, r.CSSpanUsPolling)
			fmt.Fprintln(w, "| scenario | frames/burst | period µs | bursts | interrupts/burst | of which polled | SPI xfers/burst | SPI xfers/interrupt | SPI bytes/burst | int_handled p50 µs (board clock) | int_handled p99 µs (board clock) | handling µs/burst | reference xfers | reference handling µs |")
			fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		}
		b := s.Burst
		fmt.Fprintf(w, "| %s | %d | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %.1f | %.1f | %d | %.0f → %.1f |\n",
			s.Name, b.FramesPerBurst, b.PeriodUs, b.Bursts, b.InterruptsPerBurst, b.PolledInterruptsPerBurst,
			b.SPITransfersPerBurst, b.SPITransfersPerInterrupt, b.SPIBytesPerBurst, b.IntHandledP50Us, b.IntHandledP99Us,
			b.HandlingUsPerBurst, b.Reference.SPITransfers, b.Reference.HandlingUsIRQ, b.Reference.HandlingUsPolling)
	}
	if any {
		fmt.Fprintln(w)
	}
}
