package report

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"slices"

	"cand/bench"
)

func sortStrings(s []string) { slices.Sort(s) }

// SVG draws one bar chart per scenario of the rx_end_to_end latency histogram:
// each bar is one classic bucket (a factor √2 wide), its height the share of the
// scenario's frames, on a logarithmic time axis. Hand-written SVG 1.1.
func SVG(rep *bench.Report) []byte {
	const (
		width    = 820
		left     = 60
		right    = 20
		panelH   = 130
		plotH    = 90
		top      = 40
		barsW    = width - left - right
		minLogUs = 0.0 // 1 µs
		maxLogUs = 4.0 // 10 ms
	)
	n := len(rep.Scenarios)
	height := top + n*panelH + 30
	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14" font-weight="bold">cand bench: RX end-to-end latency (INT edge → frame written to the socket), share of frames per bucket</text>`+"\n", left)
	x := func(u float64) float64 {
		l := math.Log10(math.Max(u, 1))
		return left + (l-minLogUs)/(maxLogUs-minLogUs)*barsW
	}
	for i, s := range rep.Scenarios {
		y0 := top + i*panelH
		base := float64(y0 + 15 + plotH)
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", left, y0+10, html.EscapeString(fmt.Sprintf(
			"%s — p50 %.1f µs, p99 %.1f µs, max %.1f µs, n=%d", s.Name, s.Stages["rx_end_to_end"].P50,
			s.Stages["rx_end_to_end"].P99, s.Stages["rx_end_to_end"].Max, s.Stages["rx_end_to_end"].Count)))
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="black"/>`+"\n", left, base, width-right, base)
		var total uint64
		for _, bk := range s.RXHistogram {
			total += bk.Count
		}
		lo := 0.0
		for _, bk := range s.RXHistogram {
			hi := bk.UpperUs
			if hi < 0 { // +Inf: drawn at the right edge
				hi = math.Pow(10, maxLogUs)
			}
			if bk.Count > 0 && total > 0 {
				h := float64(bk.Count) / float64(total) * plotH
				x0, x1 := x(lo), x(hi)
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#3070b0"><title>%.1f–%.1f µs: %d</title></rect>`+"\n",
					x0, base-h, math.Max(x1-x0-0.5, 0.5), h, lo, hi, bk.Count)
			}
			lo = hi
		}
		if wire := s.WireUsPerRXFrame; wire > 0 {
			xw := x(wire)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#c03030" stroke-dasharray="4 3"/>`+"\n", xw, base-plotH, xw, base)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#c03030">SPI wire %.1f µs</text>`+"\n", xw+3, base-plotH+10, wire)
		}
		for _, t := range []float64{1, 10, 100, 1000, 10000} {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", x(t), base, x(t), base+4)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x(t), base+15, tick(t))
		}
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func tick(us float64) string {
	switch {
	case us >= 1000:
		return fmt.Sprintf("%g ms", us/1000)
	default:
		return fmt.Sprintf("%g µs", us)
	}
}
