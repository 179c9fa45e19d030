package report

import (
	"fmt"
	"io"

	"cand/bench"
	"cand/bench/kernelref"
)

// boardLine says which board the run was made on.
func boardLine(w io.Writer, rep *bench.Report) {
	b := rep.Board
	if b == nil {
		return
	}
	fmt.Fprintf(w, "Board: %s (%s, %s", b.Model, b.Backend, b.SoC)
	if b.Revision != "" {
		fmt.Fprintf(w, ", revision %s", b.Revision)
	}
	fmt.Fprintf(w, ", core clock %d Hz)\n\n", b.CoreClockHz)
}

// pipelineHeading names the board the pipeline ran on.
func pipelineHeading(rep *bench.Report) string {
	if rep.Board != nil && rep.Board.Backend != "sim" {
		return "Full pipeline on " + rep.Board.Model
	}
	return "Full pipeline on the virtual Pi"
}

// workloadTables writes the workload figures, the controllers of two-controller
// runs, and the kernel driver's way side by side.
func workloadTables(w io.Writer, rep *bench.Report) {
	var any bool
	for _, s := range rep.Scenarios {
		if s.Workload == "" && s.Kernel == nil {
			continue
		}
		if !any {
			any = true
			fmt.Fprintln(w, "### Workloads")
			fmt.Fprintln(w)
			fmt.Fprintln(w, "| scenario | workload | bits/frame | offered | received | lost | seq gaps | reordered | duplicates | filtered (leaked) | error frames | TX offered | TX sent | TX unsent | arb lost | SPI xfers/TX frame | SPI bytes/TX frame | owner busy |")
			fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		}
		fmt.Fprintf(w, "| %s | %s | %.1f | %d | %d | %d | %d | %d | %d | %d (%d) | %d | %d | %d | %d | %d | %.2f | %.1f | %s |\n",
			s.Name, s.Workload, s.BitsPerFrame, s.FramesOffered, s.FramesReceived, s.FramesLost, s.SeqGaps, s.Reordered, s.Duplicates,
			s.FilteredOffered, s.FilterLeaks, s.ErrorFramesRead, s.TXOffered, s.TXSent, s.TXUnsent, s.TXArbLost,
			s.SPITransfersPerTXFrame, s.SPIBytesPerTXFrame, busyText(s.OwnerBusy))
	}
	if any {
		fmt.Fprintln(w)
	}
	portsTable(w, rep)
	kernelTable(w, rep)
}

func busyText(f float64) string {
	if f < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f %%", 100*f)
}

func portsTable(w io.Writer, rep *bench.Report) {
	var any bool
	for _, s := range rep.Scenarios {
		for _, p := range s.Ports {
			if !any {
				any = true
				fmt.Fprintln(w, "### Controllers of multi-controller scenarios")
				fmt.Fprintln(w)
				fmt.Fprintln(w, "| scenario | controller | offered | received | lost | overflows | SPI xfers/RX frame | SPI bytes/RX frame | rx_end_to_end p50 µs | p99 µs |")
				fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
			}
			fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d | %.2f | %.1f | %.1f | %.1f |\n", s.Name, p.Name, p.FramesOffered, p.FramesReceived,
				p.FramesLost, p.RXOverflows, p.SPITransfersPerRXFrame, p.SPIBytesPerRXFrame, p.RXEndToEnd.P50, p.RXEndToEnd.P99)
		}
	}
	if any {
		fmt.Fprintln(w)
	}
}

// kernelTable puts cand and the kernel driver's way (bench/kernelref) side by
// side, each ratio kernel ÷ cand.
func kernelTable(w io.Writer, rep *bench.Report) {
	var any bool
	for _, s := range rep.Scenarios {
		k := s.Kernel
		if k == nil {
			continue
		}
		if !any {
			any = true
			fmt.Fprintln(w, "### cand and the kernel driver's way, same workload (kernel ÷ cand)")
			fmt.Fprintln(w)
			fmt.Fprintf(w, "The kernel's way is bench/kernelref: mcp251x's SPI sequence on a virtual Pi of the same board, with its wake-ups and per-transfer work charged from a published Raspberry Pi 2 measurement (%s), scaled to a Pi 3 on pi3; its board time is those charges and the SPI wire's time, nothing of the host's running of it: calibrated, not measured (docs/kernel-reference.md). Lost is a share of the frames offered to each.\n\n", kernelref.Source)
			fmt.Fprintln(w, "| scenario | lost cand | lost kernel | SPI xfers/RX frame cand | kernel | × | SPI bytes/RX frame cand | kernel | × | rx_end_to_end p50 µs cand | kernel | × | p99 µs cand | kernel | × | SPI xfers/TX frame cand | kernel | kernel busy | kernel passed up unfiltered |")
			fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		}
		if k.Error != "" {
			fmt.Fprintf(w, "| %s | kernel reference failed: %s |||||||||||||||||||\n", s.Name, k.Error)
			continue
		}
		e2e := s.Stages["rx_end_to_end"]
		fmt.Fprintf(w, "| %s | %s | %s | %.2f | %.2f | %s | %.1f | %.1f | %s | %.1f | %.1f | %s | %.1f | %.1f | %s | %.2f | %.2f | %.0f %% | %d |\n",
			s.Name, lostShare(s.FramesLost, s.FramesOffered), lostShare(k.FramesLost, k.FramesOffered),
			s.SPITransfersPerRXFrame, k.SPITransfersPerRXFrame, ratio(k.SPITransfersPerRXFrame, s.SPITransfersPerRXFrame),
			s.SPIBytesPerRXFrame, k.SPIBytesPerRXFrame, ratio(k.SPIBytesPerRXFrame, s.SPIBytesPerRXFrame),
			e2e.P50, k.RXEndToEnd.P50, ratio(k.RXEndToEnd.P50, e2e.P50), e2e.P99, k.RXEndToEnd.P99, ratio(k.RXEndToEnd.P99, e2e.P99),
			s.SPITransfersPerTXFrame, k.SPITransfersPerTXFrame, 100*k.BusyFraction, k.Unfiltered)
	}
	if any {
		fmt.Fprintln(w)
	}
}

func lostShare(lost, offered uint64) string {
	if offered == 0 {
		return "–"
	}
	return fmt.Sprintf("%d (%.2f %%)", lost, 100*float64(lost)/float64(offered))
}

func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f×", a/b)
}
