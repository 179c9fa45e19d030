package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"cand/mcp2515"
)

// collector exports one Controller. Its descriptors carry the controller and
// interface as constant labels, so each controller is a separate collector in the
// registry and two controllers never collide.
type collector struct {
	c        *Controller
	stage    *prometheus.Desc
	transfer *prometheus.Desc
	stages   []Stage
	counters []counterMetric
	gauges   []gaugeMetric
}

var _ prometheus.Collector = (*collector)(nil)

type counterMetric struct {
	desc   *prometheus.Desc
	c      *Counter
	labels []string
}

type gaugeMetric struct {
	desc *prometheus.Desc
	g    *Gauge
}

func newCollector(c *Controller) *collector {
	cl := prometheus.Labels{"controller": c.name, "interface": c.iface}
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("cand_"+name, help, labels, cl)
	}
	k := &collector{
		c: c,
		stage: desc("stage_latency_seconds",
			"Latency of each stage of the frame path. int_to_handler: INT edge (kernel timestamp) to handler running; "+
				"handler_to_cs: handler running to first CS-down; rx_end_to_end: INT edge to frame written to the socket; "+
				"int_handled: INT edge to interrupt fully handled; tx_socket_to_rts: frame read from the socket to RTS issued; "+
				"tx_socket_to_done: frame read from the socket to TX-done interrupt; both_rx_full: time both RX buffers were full; "+
				"rx_chip_to_ring: status read that found a frame to the frame in the RX ring; rx_ring_to_socket: RX ring to socket write.",
			"stage"),
		transfer: desc("spi_transfer_seconds",
			"SPI transfer time from CS-down to CS-up, by MCP2515 instruction (kind) and by whether the end was seen polling or after sleeping (completion).",
			"kind", "completion"),
		stages: c.Stages(),
	}
	waits := desc("waits_total", "Waits of the owner thread for the SPI engine, by whether they ended while polling or after sleeping.", "completion")
	k.counters = []counterMetric{
		{desc("rx_frames_total", "CAN frames received from the bus and written to the SocketCAN interface."), c.RXFrames, nil},
		{desc("tx_frames_total", "CAN frames read from the SocketCAN interface and transmitted on the bus."), c.TXFrames, nil},
		{desc("rx_bytes_total", "Data bytes of the received CAN frames."), c.RXBytes, nil},
		{desc("tx_bytes_total", "Data bytes of the transmitted CAN frames."), c.TXBytes, nil},
		{desc("rx_bit_times_total", "Bit times on the wire of the received CAN frames, SOF to end of EOF plus the 3-bit intermission, stuff bits included: rate() divided by cand_bitrate is the bus load they make."), c.RXBits, nil},
		{desc("tx_bit_times_total", "Bit times on the wire of the transmitted CAN frames, SOF to end of EOF plus the 3-bit intermission, stuff bits included."), c.TXBits, nil},
		{desc("rx_overflows_total", "RX overflow events: the MCP2515 found both RX buffers full and dropped at least one frame (EFLG RX0OVR/RX1OVR, a flag, not a count); one event may stand for several frames."), c.RXOverflows, nil},
		{desc("tx_dropped_total", "CAN frames read from the SocketCAN interface but not transmitted (aborted, timed out or bus-off)."), c.TXDropped, nil},
		{desc("tx_unsent_at_exit_total", "CAN frames still waiting in cand's socket queue when it stopped: never read, never sent."), c.TXUnsentAtExit, nil},
		{desc("error_frames_total", "SocketCAN error frames written to the interface."), c.ErrorFrames, nil},
		{desc("bus_off_total", "Transitions of the controller to bus-off."), c.BusOffs, nil},
		{desc("chip_resets_total", "Resets of the MCP2515, at start-up and for recovery."), c.ChipResets, nil},
		{desc("restarts_total", "Restarts of the controller after bus-off (restart_ms or a manual restart); rate-limited while bus-off repeats."), c.Restarts, nil},
		{desc("int_storms_total", "Times the INT line was found stuck low with no interrupt flag set (a wiring fault or a wrong int_gpio); meanwhile cand polls the chip slowly instead of servicing the line."), c.IntStorms, nil},
		{desc("socket_errors_total", "SocketCAN socket errors other than a full queue (ENOBUFS/EAGAIN), each logged with its cause: the link down or gone, or a failure that stops the controller's bridging."), c.SocketErrors, nil},
		{desc("interrupts_total", "MCP2515 interrupts (INT falling edges) handled."), c.Interrupts, nil},
		{desc("socket_drops_total", "CAN frames the kernel dropped from cand's socket receive queue (SO_RXQ_OVFL)."), c.SocketDrops, nil},
		{desc("rx_order_uncertain_total", "Reads that found both RX buffers full where the bus order of the two frames could not be known (the owner thread looked again too late); the likelier order was taken."), c.RXOrderUncertain, nil},
		{desc("rx_invalid_reads_total", "RX buffer read-backs that were no CAN frame, dropped: bits the MCP2515 reads as 0 were set (MISO floating: a chip reset or unplugged between READ STATUS and READ RX BUFFER), or an all-zero read-back from a chip the check then found reset. The chip is then re-initialised."), c.RXInvalidReads, nil},
		{desc("spi_bytes_total", "Bytes shifted over SPI for this controller."), c.SPIBytes, nil},
		{desc("spi_errors_total", "SPI transfers that failed (the controller did not complete them)."), c.SPIErrors, nil},
		{desc("rx_socket_errors_total", "Received CAN frames the SocketCAN socket refused (ENOBUFS/EAGAIN): lost on the host side."), c.SocketWriteErrs, nil},
		{desc("tx_invalid_total", "Records read from the SocketCAN socket that are not CAN 2.0 data or remote frames (not sent)."), c.TXInvalid, nil},
		{desc("message_errors_total", "MCP2515 message errors (CANINTF.MERRF)."), c.MessageErrors, nil},
		{desc("int_edges_total", "Edge events read from the INT line."), c.IntEdges, nil},
		{desc("int_events_lost_total", "INT edge events the kernel dropped from its event buffer (sequence-number gaps); level re-checks keep the interrupts themselves from being lost."), c.IntEventsLost, nil},
		{desc("polled_interrupts_total", "Interrupts found by busy-polling the INT level in the poll window, before any edge event."), c.PolledInts, nil},
		{desc("interrupt_spi_transfers_total", "SPI transfers made while handling interrupts; divided by cand_rx_frames_total it gives transfers per received frame."), c.RXSPITransfers, nil},
		{desc("interrupt_spi_bytes_total", "SPI bytes shifted while handling interrupts."), c.RXSPIBytes, nil},
		{desc("rx_ring_drops_total", "Received CAN frames lost because cand's RX ring was full: the socket side fell behind the chip for longer than the ring holds. Reported like an RX overflow (an error frame with CAN_ERR_CRTL_RX_OVERFLOW)."), c.RXRingDrops, nil},
		{waits, c.Polls, []string{CompletionPoll.String()}},
		{waits, c.Sleeps, []string{CompletionSleep.String()}},
	}
	k.gauges = []gaugeMetric{
		{desc("bus_state", "CAN fault-confinement state: 0 error-active, 1 error-warning, 2 error-passive, 3 bus-off."), c.BusState},
		{desc("tec", "Transmit error counter (TEC) of the MCP2515: error-warning from 96, error-passive from 128, bus-off at 256."), c.TEC},
		{desc("rec", "Receive error counter (REC) of the MCP2515: error-warning from 96, error-passive from 128."), c.REC},
		{desc("chip_up", "1 while the MCP2515 answers on SPI; 0 while it is missing or does not answer (retried with back-off)."), c.ChipUp},
		{desc("link_up", "1 while the SocketCAN interface is up and the controller on the bus; 0 while the interface is down and the controller held off the bus."), c.LinkUp},
		{desc("bitrate", "Nominal CAN bitrate the controller is configured for, in bit/s."), c.Bitrate},
		{desc("rx_ring_high_water", "The most received frames that waited at once in cand's RX ring between the chip and the socket."), c.RXRingHighWater},
		{desc("spi_clock_hertz", "SPI clock (SCLK) frequency in use."), c.SCLKHz},
		{desc("spi_clock_min_hertz", "Lowest SCLK the divider gives over the core clock's range (the firmware scales the core clock unless core_freq is pinned)."), c.SCLKMinHz},
		{desc("spi_clock_max_hertz", "Highest SCLK the divider gives over the core clock's range; never above the configured clock_hz."), c.SCLKMaxHz},
	}
	return k
}

func (k *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- k.stage
	ch <- k.transfer
	for i, m := range k.counters {
		if i == 0 || m.desc != k.counters[i-1].desc {
			ch <- m.desc
		}
	}
	for _, m := range k.gauges {
		ch <- m.desc
	}
}

// Collect implements prometheus.Collector. It reads the atomics written by the
// frame path; it runs on the scrape's goroutine and may allocate.
func (k *collector) Collect(ch chan<- prometheus.Metric) {
	v := new(histValue)
	for _, s := range k.stages {
		s.H.load(v)
		ch <- newHistMetric(k.stage, v, k.c.created, s.Name)
	}
	for op := range mcp2515.NumOps {
		for comp := range NumCompletions {
			k.c.Transfer[op][comp].load(v)
			ch <- newHistMetric(k.transfer, v, k.c.created, op.String(), comp.String())
		}
	}
	for _, m := range k.counters {
		ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(m.desc, prometheus.CounterValue, float64(m.c.Load()), k.c.created, m.labels...)
	}
	for _, m := range k.gauges {
		ch <- prometheus.MustNewConstMetric(m.desc, prometheus.GaugeValue, float64(m.g.Load()))
	}
}
