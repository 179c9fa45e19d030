package bench

import (
	"fmt"
	"io"
	"strings"
)

// Markdown writes rep as Markdown tables: scenarios, stage latencies, SPI engine
// transfers and targets.
func Markdown(w io.Writer, rep *Report) {
	boardLine(w, rep)
	if len(rep.Scenarios) > 0 {
		fmt.Fprintln(w, pipelineHeading(rep))
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| scenario | bitrate | load % | INT poll window | stress | sim CPU | s | offered | received | lost | overflows | SPI xfers/RX frame | SPI bytes/RX frame | wire µs/RX frame | allocs/frame | CPU µs/frame | polled INTs |")
		fmt.Fprintln(w, "|---|---:|---:|---:|:---:|:---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
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
			fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %.1f | %d | %d | %d | %d | %.2f | %.1f | %.1f | %.4f | %.1f | %d |\n",
				s.Name, s.Bitrate, load, win, stress, simCPU(s), s.DurationS, s.FramesOffered, s.FramesReceived, s.FramesLost,
				s.RXOverflows, s.SPITransfersPerRXFrame, s.SPIBytesPerRXFrame, s.WireUsPerRXFrame, s.AllocsPerFrame,
				s.CPUUsPerFrame, s.PolledInterrupts)
		}
		for _, s := range rep.Scenarios {
			if s.Error != "" {
				fmt.Fprintf(w, "\n**%s failed:** %s\n", s.Name, s.Error)
			}
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "### Host stalls taken out of the virtual Pi's time (sim/clock)")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| scenario | sim CPU | CPU stalls | of which Go runtime parks | of which wake-ups > 50 µs | removed ms | longest µs | bus thread late | removed ms |")
		fmt.Fprintln(w, "|---|:---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, s := range rep.Scenarios {
			c := s.Clock
			fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %.1f | %.0f | %d | %.1f |\n",
				s.Name, simCPU(s), c.CPUStalls, c.RuntimeParks, c.SlowWakeUps, c.CPUStallMs, c.CPUStallMaxUs, c.BusLate, c.BusLateMs)
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "### Stage latencies (µs)")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| scenario | stage | count | p50 | p90 | p99 | p99.9 | max |")
		fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|")
		for _, s := range rep.Scenarios {
			for _, name := range stageOrder(s.Stages) {
				st := s.Stages[name]
				if st.Count == 0 {
					continue
				}
				fmt.Fprintf(w, "| %s | %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f |\n",
					s.Name, name, st.Count, st.P50, st.P90, st.P99, st.P999, st.Max)
			}
		}
		fmt.Fprintln(w)
	}
	workloadTables(w, rep)
	burstTable(w, rep)
	if len(rep.Transfers) > 0 {
		fmt.Fprintln(w, "### SPI engine: polling-first vs sleeping for every transfer (CS-down → CS-up, µs)")
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

func simCPU(s ScenarioResult) string {
	if s.SharedCPU {
		return "shared"
	}
	return "dedicated"
}

// stageOrder lists the named stages first, then the SPI transfer kinds.
func stageOrder(m map[string]Stage) []string {
	var out []string
	for _, n := range StageNames {
		if _, ok := m[n]; ok {
			out = append(out, n)
		}
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
func burstTable(w io.Writer, rep *Report) {
	var any bool
	for _, s := range rep.Scenarios {
		if s.Burst == nil {
			continue
		}
		if !any {
			any = true
			r := Reference3x7
			fmt.Fprintf(w, "### Bursts of back-to-back frames vs the kernel driver's one interrupt with %d messages / %d transfers\n\n", r.Messages, r.SPITransfers)
			fmt.Fprintf(w, "Reference (the kernel's mcp251x and spi-bcm2835 on a Pi 2, %s): %d messages in one interrupt, %d SPI transfers; %s %.0f µs → %.1f µs as SPI polling grew longer; first CS-down → last CS-up %.1f µs → %.1f µs. "+
				"Here each interrupt is counted separately: int_handled is per interrupt (INT edge, or the poll window seeing INT, → INT high again); handling µs/burst = interrupts/burst × int_handled p50.\n\n",
				r.Source, r.Messages, r.SPITransfers, r.HandlingDefinition, r.HandlingUsIRQ, r.HandlingUsPolling, r.CSSpanUsIRQ, r.CSSpanUsPolling)
			fmt.Fprintln(w, "| scenario | frames/burst | period µs | bursts | interrupts/burst | of which polled | SPI xfers/burst | SPI xfers/interrupt | SPI bytes/burst | int_handled p50 µs | int_handled p99 µs | handling µs/burst | reference xfers | reference handling µs |")
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
