package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"cand/config"
	"cand/daemon"
)

// Exit codes of cand status besides 0 (shown), 1 (any other failure) and 2 (usage),
// the LSB init-script status codes: 3 program is not running, 4 insufficient
// privilege.
const (
	exitNoDaemon = 3
	exitDenied   = 4
)

// statusTimeout bounds the whole request.
const statusTimeout = 5 * time.Second

// runStatus is `cand status [-json] [-socket PATH]`: the running daemon's
// controllers as `ip -details -statistics link show` shows a kernel CAN interface
// (docs/status.md), read from its status socket.
func runStatus(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("cand status", flag.ContinueOnError)
	flags.SetOutput(stderr)
	socket := flags.String("socket", config.DefaultStatusSocket, "the daemon's status socket (status.socket in its configuration)")
	asJSON := flags.Bool("json", false, "print the status document as JSON, for scripts (schema in docs/status.md)")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "cand status: unexpected argument %q; usage: cand status [-json] [-socket PATH]\n", flags.Arg(0))
		return 2
	}
	path := *socket
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	st, raw, err := daemon.FetchStatus(ctx, path)
	switch {
	case errors.Is(err, daemon.ErrNoDaemon):
		fmt.Fprintf(stderr, "cand status: no daemon at %s (is cand running? see systemctl status cand)\n", path)
		return exitNoDaemon
	case errors.Is(err, fs.ErrPermission):
		who := "the socket's group (status.group)"
		if g := daemon.SocketGroup(path); g != "" {
			who = "group " + g
		}
		fmt.Fprintf(stderr, "cand status: %s: permission denied: run as root or as a member of %s\n", path, who)
		return exitDenied
	case err != nil:
		fmt.Fprintf(stderr, "cand status: %v\n", err)
		return 1
	}
	if *asJSON {
		stdout.Write(raw)
		return 0
	}
	writeStatus(stdout, st)
	return 0
}

// writeStatus prints every controller in the layout of `ip -details -statistics
// link show` for a CAN interface (docs/status.md).
func writeStatus(w io.Writer, st *daemon.Status) {
	for i, c := range st.Controllers {
		link, chip := "down", "up"
		if c.LinkUp {
			link = "up"
		}
		if !c.ChipUp {
			chip = "MISSING"
		}
		fmt.Fprintf(w, "%d: %s: interface %s link %s chip %s\n", i+1, c.Name, c.Interface, link, chip)
		fmt.Fprintf(w, "    can state %s (berr-counter tx %d rx %d) restart-ms %d\n", c.State, c.BerrCounter.TX, c.BerrCounter.RX, c.RestartMs)
		t := c.BitTiming
		fmt.Fprintf(w, "          bitrate %d sample-point %.3f\n", t.Bitrate, t.SamplePoint)
		fmt.Fprintf(w, "          tq %d prop-seg %d phase-seg1 %d phase-seg2 %d sjw %d brp %d\n", t.TQNs, t.PropSeg, t.PhaseSeg1, t.PhaseSeg2, t.SJW, t.BRP)
		fmt.Fprintf(w, "          mcp2515: oscillator %d sclk %d\n", c.OscillatorHz, c.SCLKHz)
		table(w, "          ", []string{"re-started", "bus-off", "chip-resets"}, c.Restarts, c.BusOff, c.ChipResets)
		l := c.BusLoad
		fmt.Fprintf(w, "    bus-load rx %.1f%% tx %.1f%% total %.1f%% (last %.1fs)\n", l.RXPercent, l.TXPercent, l.TotalPercent, l.IntervalSeconds)
		table(w, "    RX: ", []string{"bytes", "frames", "bit-times", "overflows", "ring-drops", "socket-errors"},
			c.RX.Bytes, c.RX.Frames, c.RX.BitTimes, c.RX.Overflows, c.RX.RingDrops, c.RX.SocketErrors)
		table(w, "    TX: ", []string{"bytes", "frames", "bit-times", "dropped", "socket-drops", "invalid"},
			c.TX.Bytes, c.TX.Frames, c.TX.BitTimes, c.TX.Dropped, c.TX.SocketDrops, c.TX.Invalid)
		table(w, "    errors: ", []string{"error-frames", "message-errors", "spi-errors"},
			c.Errors.ErrorFrames, c.Errors.MessageErrors, c.Errors.SPIErrors)
		writeLatency(w, c.Latency)
	}
}

// table prints a header line and, under it, a line of values, each column as wide
// as the wider of the two, left-aligned as ip prints the CAN statistics. The
// second line is indented as deep as the first, whatever its prefix.
func table(w io.Writer, prefix string, headers []string, values ...uint64) {
	var head, vals strings.Builder
	head.WriteString(prefix)
	vals.WriteString(strings.Repeat(" ", len(prefix)))
	for i, h := range headers {
		v := strconv.FormatUint(values[i], 10)
		width := max(len(h), len(v)) + 1
		fmt.Fprintf(&head, "%-*s", width, h)
		fmt.Fprintf(&vals, "%-*s", width, v)
	}
	fmt.Fprintln(w, strings.TrimRight(head.String(), " "))
	fmt.Fprintln(w, strings.TrimRight(vals.String(), " "))
}

// writeLatency prints each stage's observations, median and 99th percentile.
func writeLatency(w io.Writer, stages []daemon.StageLatency) {
	width := len("latency")
	for _, s := range stages {
		width = max(width, len(s.Stage))
	}
	fmt.Fprintf(w, "    %-*s  %10s  %10s  %10s\n", width, "latency", "count", "p50", "p99")
	for _, s := range stages {
		p50, p99 := "-", "-"
		if s.Count > 0 {
			p50, p99 = seconds(s.P50Seconds), seconds(s.P99Seconds)
		}
		fmt.Fprintf(w, "    %-*s  %10d  %10s  %10s\n", width, s.Stage, s.Count, p50, p99)
	}
}

// seconds prints a latency to a tenth of a microsecond: 12.3µs, 1.2ms.
func seconds(s float64) string {
	return time.Duration(s * 1e9).Round(100 * time.Nanosecond).String()
}
