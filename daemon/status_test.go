package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"go.einride.tech/can"

	"cand/canstate"
	"cand/config"
	"cand/internal/waitfor"
	"cand/sim/canbus"
	"cand/socketcan"
)

// statusDir is a short-lived directory for a status socket: short, because a unix
// socket's path has at most 107 bytes, and a test's TempDir can be longer.
func statusDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cand-status")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func fetchStatus(t *testing.T, path string) *Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, _, err := FetchStatus(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// scrape is one /metrics scrape in the protobuf format (which carries the native
// histogram buckets), by metric name.
type scrape map[string]*dto.MetricFamily

func scrapeMetrics(t *testing.T, addr string) scrape {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	s := scrape{}
	for {
		mf := new(dto.MetricFamily)
		if err := dec.Decode(mf); err != nil {
			break
		}
		s[mf.GetName()] = mf
	}
	if len(s) == 0 {
		t.Fatalf("no metrics decoded from %s (Content-Type %q)", addr, resp.Header.Get("Content-Type"))
	}
	return s
}

// metric returns the sample of name whose labels include want.
func (s scrape) metric(t *testing.T, name string, want map[string]string) *dto.Metric {
	t.Helper()
	mf := s[name]
	if mf == nil {
		t.Fatalf("/metrics has no %s", name)
	}
next:
	for _, m := range mf.GetMetric() {
		for k, v := range want {
			found := false
			for _, l := range m.GetLabel() {
				found = found || (l.GetName() == k && l.GetValue() == v)
			}
			if !found {
				continue next
			}
		}
		return m
	}
	t.Fatalf("/metrics has no %s%v", name, want)
	return nil
}

// value is the counter's or gauge's value of name for controller sim0.
func (s scrape) value(t *testing.T, name string) float64 {
	t.Helper()
	m := s.metric(t, name, map[string]string{"controller": "sim0"})
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}

// nativeBucket returns the bounds (lo, hi] in seconds of the schema-3 native
// bucket that holds the ⌈q·n⌉-th smallest observation of h; (0, 0] for the zero
// bucket.
func nativeBucket(h *dto.Histogram, q float64) (lo, hi float64) {
	rank := max(uint64(math.Ceil(q*float64(h.GetSampleCount()))), 1)
	seen := h.GetZeroCount()
	if seen >= rank {
		return 0, 0
	}
	key, count := int32(0), int64(0)
	d := 0
	for _, span := range h.GetPositiveSpan() {
		key += span.GetOffset()
		for range span.GetLength() {
			count += h.GetPositiveDelta()[d]
			d++
			seen += uint64(count)
			if seen >= rank {
				schema := float64(h.GetSchema())
				return math.Exp2(float64(key-1) / math.Exp2(schema)), math.Exp2(float64(key) / math.Exp2(schema))
			}
			key++
		}
	}
	return math.Inf(1), math.Inf(1)
}

// The status document carries the very values /metrics exports: with the traffic
// at rest, every counter, gauge and bit-timing label is equal, each stage's
// count is the histogram's, and its p50 and p99 lie in the native bucket of that
// rank. The bit times are the simulated bus's own count of the frames it carried.
func TestStatusMatchesMetrics(t *testing.T) {
	sock := filepath.Join(statusDir(t), "status.sock")
	// Lossless traffic both ways is the premise (equal counters, not timing), and
	// the echo answers each frame back to back: on the default Pi 3 at its idle
	// clocks that overflows the RX buffers, so this runs on a Pi 4 at force_turbo,
	// on the dedicated rule: on the strict one the Pi 4 overflowed too, now and then,
	// in a fresh-clone CI run (docs/clock.md, "Tests that changed what they run on").
	r := newRigConfig(t).board(config.SimBoardPi4).forceTurbo().clockRule(config.SimCPUDedicated).statusSocket(sock, "").peer(answerPeer("echo", 1)).start()
	if r.d.StatusSocket != sock {
		t.Fatalf("Daemon.StatusSocket = %q, want %q", r.d.StatusSocket, sock)
	}
	echo := r.pi.Node(0).Peers[0]

	// TX: frames of every form from the socket; the peer answers each data frame.
	var sent, answers []can.Frame
	for i := range 24 {
		f := can.Frame{ID: uint32(0x100 + i), Length: uint8(i % 9)}
		if i%3 == 1 {
			f.ID, f.IsExtended = 0x18DA0000|uint32(i), true
		}
		if i%4 == 3 {
			f.IsRemote = true
		}
		for j := range int(f.Length) {
			if !f.IsRemote {
				f.Data[j] = byte(i * (j + 1))
			}
		}
		sent = append(sent, f)
		if !f.IsRemote {
			a := f
			a.ID++
			answers = append(answers, a)
		}
	}
	// RX also: frames the peer sends of its own.
	own := []can.Frame{{ID: 0x7FF, Length: 8, Data: can.Data{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}}, {ID: 0x1FFFFFFF, IsExtended: true, IsRemote: true, Length: 2}}
	var wantRX, wantTX, wantRXBytes, wantTXBytes uint64
	for _, f := range sent {
		r.write(0, f)
		wantTX += uint64(canbus.FrameBits(f))
		wantTXBytes += uint64(f.Length)
	}
	for _, f := range own {
		echo.Send(f)
	}
	for _, f := range append(append([]can.Frame(nil), answers...), own...) {
		wantRX += uint64(canbus.FrameBits(f))
		wantRXBytes += uint64(f.Length)
	}
	nRX := len(answers) + len(own)
	for i := range nRX {
		if _, k, err := r.read(0, 5*time.Second); err != nil || k == socketcan.FrameError {
			t.Fatalf("frame %d of %d: kind %v, %v", i, nRX, k, err)
		}
	}
	m := r.d.Owner.Ports[0].M
	// A frame is counted just after it is written to the socket.
	waitfor.Cond(t, 5*time.Second, "every frame counted", func() bool {
		return m.TXFrames.Load() == uint64(len(sent)) && m.RXFrames.Load() == uint64(nRX)
	})

	before := scrapeMetrics(t, r.d.MetricsAddr)
	st := fetchStatus(t, sock)
	after := scrapeMetrics(t, r.d.MetricsAddr)

	if st.SchemaVersion != StatusSchemaVersion || st.Version != "test" || len(st.Controllers) != 1 || st.ClockSource != "runtime" {
		t.Fatalf("schema %d, version %q, clock source %q, %d controllers; want %d, test, runtime (a Pi 4), 1",
			st.SchemaVersion, st.Version, st.ClockSource, len(st.Controllers), StatusSchemaVersion)
	}
	c := st.Controllers[0]
	if c.Name != "sim0" || c.Interface != "vcan0" {
		t.Errorf("controller %s on %s, want sim0 on vcan0", c.Name, c.Interface)
	}
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	for _, f := range []struct {
		metric string
		status float64
	}{
		{"cand_rx_frames_total", float64(c.RX.Frames)},
		{"cand_rx_bytes_total", float64(c.RX.Bytes)},
		{"cand_rx_bit_times_total", float64(c.RX.BitTimes)},
		{"cand_rx_overflows_total", float64(c.RX.Overflows)},
		{"cand_rx_socket_errors_total", float64(c.RX.SocketErrors)},
		{"cand_tx_frames_total", float64(c.TX.Frames)},
		{"cand_tx_bytes_total", float64(c.TX.Bytes)},
		{"cand_tx_bit_times_total", float64(c.TX.BitTimes)},
		{"cand_tx_dropped_total", float64(c.TX.Dropped)},
		{"cand_socket_drops_total", float64(c.TX.SocketDrops)},
		{"cand_tx_invalid_total", float64(c.TX.Invalid)},
		{"cand_error_frames_total", float64(c.Errors.ErrorFrames)},
		{"cand_message_errors_total", float64(c.Errors.MessageErrors)},
		{"cand_spi_errors_total", float64(c.Errors.SPIErrors)},
		{"cand_bus_off_total", float64(c.BusOff)},
		{"cand_chip_resets_total", float64(c.ChipResets)},
		{"cand_tec", float64(c.BerrCounter.TX)},
		{"cand_rec", float64(c.BerrCounter.RX)},
		{"cand_link_up", b(c.LinkUp)},
		{"cand_chip_up", b(c.ChipUp)},
		{"cand_spi_clock_hertz", float64(c.SCLKHz)},
		{"cand_bitrate", float64(c.BitTiming.Bitrate)},
	} {
		v0, v1 := before.value(t, f.metric), after.value(t, f.metric)
		if v0 != v1 {
			t.Errorf("%s moved from %g to %g while at rest", f.metric, v0, v1)
		} else if f.status != v0 {
			t.Errorf("status has %g for %s, /metrics %g", f.status, f.metric, v0)
		}
	}
	linkUp := before.value(t, "cand_link_up") == 1
	if want := StateName(linkUp, canstate.State(before.value(t, "cand_bus_state"))); c.State != want {
		t.Errorf("state %s; /metrics says %s", c.State, want)
	}
	if want := c.BusOff; c.State == "BUS-OFF" && want > 0 {
		want--
		if c.Restarts != want {
			t.Errorf("%d restarts after %d bus-offs, still bus-off", c.Restarts, c.BusOff)
		}
	} else if c.Restarts != c.BusOff {
		t.Errorf("%d restarts after %d bus-offs", c.Restarts, c.BusOff)
	}

	// The bit times and bytes are the frames'.
	if c.RX.BitTimes != wantRX || c.TX.BitTimes != wantTX || c.RX.Bytes != wantRXBytes || c.TX.Bytes != wantTXBytes ||
		c.RX.Frames != uint64(nRX) || c.TX.Frames != uint64(len(sent)) {
		t.Errorf("rx %d frames %d bytes %d bit times, tx %d frames %d bytes %d bit times; want rx %d %d %d, tx %d %d %d",
			c.RX.Frames, c.RX.Bytes, c.RX.BitTimes, c.TX.Frames, c.TX.Bytes, c.TX.BitTimes,
			nRX, wantRXBytes, wantRX, len(sent), wantTXBytes, wantTX)
	}

	// The bit timing is cand_bit_timing_info's.
	info := before.metric(t, "cand_bit_timing_info", map[string]string{"controller": "sim0", "interface": "vcan0"})
	bt := c.BitTiming
	for _, l := range []struct {
		name, status string
	}{
		{"bitrate", fmt.Sprint(bt.Bitrate)},
		{"sample_point", strconv.FormatFloat(bt.SamplePoint, 'f', 3, 64)},
		{"tq_ns", fmt.Sprint(bt.TQNs)},
		{"prop_seg", fmt.Sprint(bt.PropSeg)},
		{"phase_seg1", fmt.Sprint(bt.PhaseSeg1)},
		{"phase_seg2", fmt.Sprint(bt.PhaseSeg2)},
		{"sjw", fmt.Sprint(bt.SJW)},
		{"brp", fmt.Sprint(bt.BRP)},
		{"oscillator_hz", fmt.Sprint(c.OscillatorHz)},
		{"sclk_hz", fmt.Sprint(c.SCLKHz)},
	} {
		var got string
		for _, lp := range info.GetLabel() {
			if lp.GetName() == l.name {
				got = lp.GetValue()
			}
		}
		if got != l.status {
			t.Errorf("cand_bit_timing_info %s=%q, status %q", l.name, got, l.status)
		}
	}
	if bt != (BitTimingStatus{Bitrate: 500_000, SamplePoint: 0.875, TQNs: 125, PropSeg: 6, PhaseSeg1: 7, PhaseSeg2: 2, SJW: 1, BRP: 1, From: "configuration"}) ||
		c.OscillatorHz != 16_000_000 || c.RestartMs != 100 {
		t.Errorf("timing %+v, oscillator %d, restart-ms %d; want the kernel's 500 kbit/s timing on 16 MHz, restart-ms 100", bt, c.OscillatorHz, c.RestartMs)
	}

	// Latencies: the histograms' counts, and p50/p99 in the bucket of their rank.
	if len(c.Latency) != 9 {
		t.Fatalf("%d stages, want 9", len(c.Latency))
	}
	for _, s := range c.Latency {
		h := before.metric(t, "cand_stage_latency_seconds", map[string]string{"controller": "sim0", "stage": s.Stage}).GetHistogram()
		h1 := after.metric(t, "cand_stage_latency_seconds", map[string]string{"controller": "sim0", "stage": s.Stage}).GetHistogram()
		if h.GetSampleCount() != h1.GetSampleCount() {
			t.Errorf("stage %s: %d observations, then %d while at rest", s.Stage, h.GetSampleCount(), h1.GetSampleCount())
			continue
		}
		if s.Count != h.GetSampleCount() {
			t.Errorf("stage %s: status counts %d, /metrics %d", s.Stage, s.Count, h.GetSampleCount())
			continue
		}
		if s.Count == 0 {
			if s.P50Seconds != 0 || s.P99Seconds != 0 {
				t.Errorf("stage %s: p50 %g p99 %g without observations", s.Stage, s.P50Seconds, s.P99Seconds)
			}
			continue
		}
		for _, q := range []struct {
			q, v float64
		}{{0.5, s.P50Seconds}, {0.99, s.P99Seconds}} {
			lo, hi := nativeBucket(h, q.q)
			if !(q.v > lo && q.v <= hi*(1+1e-12)) && !(hi == 0 && q.v == 0) {
				t.Errorf("stage %s: p%g = %g s, outside its bucket (%g, %g]", s.Stage, 100*q.q, q.v, lo, hi)
			}
		}
	}
	for _, stage := range []string{"rx_end_to_end", "tx_socket_to_done"} {
		for _, s := range c.Latency {
			if s.Stage == stage && s.Count == 0 {
				t.Errorf("stage %s has no observations after the traffic", stage)
			}
		}
	}
}

// A load peer keeps the bus 30 % busy with frames the controller receives: the
// status shows about that as RX load over the last whole interval, and no TX load.
// The interval is measured in the board's time, in which the peer is paced, and
// the sampler ticks in it too, so an interval is about one second of it.
func TestStatusBusLoad(t *testing.T) {
	sock := filepath.Join(statusDir(t), "status.sock")
	r := newRigConfig(t).statusSocket(sock, "").peer(loadPeer("load", 0x123, 8, 30)).start()
	ctx, cancel := context.WithCancel(context.Background())
	drained := make(chan struct{})
	defer func() { cancel(); <-drained }()
	go func() { // read what the daemon writes, as candump would
		defer close(drained)
		for ctx.Err() == nil {
			r.read(0, 100*time.Millisecond)
		}
	}()
	started := time.Now()
	var l BusLoad
	waitfor.Cond(t, 10*time.Second, "a whole interval of traffic", func() bool {
		if time.Since(started) < 2*busLoadInterval+100*time.Millisecond {
			return false // the first interval began before the bus ran
		}
		l = fetchStatus(t, sock).Controllers[0].BusLoad
		return true
	})
	if l.IntervalSeconds <= 0 || l.IntervalSeconds > busLoadInterval.Seconds()+0.2 {
		t.Errorf("interval %g s, want more than 0 and about %g at most", l.IntervalSeconds, busLoadInterval.Seconds())
	}
	if l.RXPercent < 20 || l.RXPercent > 31 || l.TXPercent != 0 || l.TotalPercent != l.RXPercent+l.TXPercent {
		t.Errorf("bus load rx %.2f %% tx %.2f %% total %.2f %%; want rx about 30, tx 0", l.RXPercent, l.TXPercent, l.TotalPercent)
	}
}

func TestStateName(t *testing.T) {
	for _, tc := range []struct {
		up   bool
		s    canstate.State
		want string
	}{
		{true, canstate.ErrorActive, "ERROR-ACTIVE"},
		{true, canstate.ErrorWarning, "ERROR-WARNING"},
		{true, canstate.ErrorPassive, "ERROR-PASSIVE"},
		{true, canstate.BusOff, "BUS-OFF"},
		{false, canstate.ErrorActive, "STOPPED"},
		{false, canstate.BusOff, "STOPPED"},
	} {
		if got := StateName(tc.up, tc.s); got != tc.want {
			t.Errorf("StateName(%v, %v) = %s, want %s", tc.up, tc.s, got, tc.want)
		}
	}
}

// TestStatusJSONKeys pins the status document's JSON keys and their nesting: the
// schema of `cand status -json` (docs/status.md) that scripts read.
func TestStatusJSONKeys(t *testing.T) {
	c := ControllerStatus{Latency: []StageLatency{{Stage: "rx_end_to_end", Count: 12}}}
	c.RX.Frames, c.RX.Bytes, c.RX.BitTimes, c.RX.Overflows, c.RX.SocketErrors, c.RX.RingDrops = 1, 2, 3, 4, 5, 12
	c.TX.Frames, c.TX.Bytes, c.TX.BitTimes, c.TX.Dropped, c.TX.SocketDrops, c.TX.Invalid = 6, 7, 8, 9, 10, 11
	b, err := json.Marshal(Status{SchemaVersion: StatusSchemaVersion, Version: "v", ClockSource: "runtime", Controllers: []ControllerStatus{c}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema_version":1,"version":"v","clock_source":"runtime","controllers":[{"name":"","interface":"","state":"","link_up":false,"chip_up":false,` +
		`"berr_counter":{"tx":0,"rx":0},"restart_ms":0,` +
		`"bit_timing":{"bitrate":0,"sample_point":0,"tq_ns":0,"prop_seg":0,"phase_seg1":0,"phase_seg2":0,"sjw":0,"brp":0,"from":""},` +
		`"oscillator_hz":0,"sclk_hz":0,` +
		`"rx":{"frames":1,"bytes":2,"bit_times":3,"overflows":4,"socket_errors":5,"ring_drops":12},` +
		`"tx":{"frames":6,"bytes":7,"bit_times":8,"dropped":9,"socket_drops":10,"invalid":11},` +
		`"errors":{"error_frames":0,"message_errors":0,"spi_errors":0},"bus_off":0,"restarts":0,"chip_resets":0,` +
		`"bus_load":{"interval_seconds":0,"rx_percent":0,"tx_percent":0,"total_percent":0},` +
		`"latency":[{"stage":"rx_end_to_end","count":12,"p50_seconds":0,"p99_seconds":0}]}]}`
	if string(b) != want {
		t.Errorf("status JSON\n%s\nwant\n%s", b, want)
	}
}
