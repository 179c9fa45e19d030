package metrics

import (
	"time"

	"cand/mcp2515"
)

// Completion says how an SPI transfer's end was noticed: by the owner thread
// polling (busy-waiting) or after it slept and was woken.
type Completion uint8

const (
	CompletionPoll Completion = iota
	CompletionSleep
	NumCompletions
)

// String returns the label value: "poll" or "sleep".
func (c Completion) String() string {
	switch c {
	case CompletionPoll:
		return "poll"
	case CompletionSleep:
		return "sleep"
	}
	return "unknown"
}

// Controller holds every metric of one MCP2515 and its SocketCAN interface. All
// fields are set by Registry.AddController and never change afterwards, so the
// frame path dereferences them without checks. Latencies are recorded in
// nanoseconds and exported in seconds.
type Controller struct {
	// Stage latencies, cand_stage_latency_seconds{stage=…}.
	IntToHandler   *Histogram // int_to_handler: INT edge (kernel timestamp) → handler running
	HandlerToCS    *Histogram // handler_to_cs: handler running → first CS-down
	RXEndToEnd     *Histogram // rx_end_to_end: INT edge → frame written to the socket
	IntHandled     *Histogram // int_handled: INT edge → interrupt fully handled (INT high again)
	TXSocketToRTS  *Histogram // tx_socket_to_rts: frame read from the socket → RTS issued
	TXSocketToDone *Histogram // tx_socket_to_done: frame read from the socket → TX-done interrupt
	BothRXFull     *Histogram // both_rx_full: time both RX buffers were full at once
	RXChipToRing   *Histogram // rx_chip_to_ring: status read that found the frame → frame in the RX ring
	RXRingToSocket *Histogram // rx_ring_to_socket: frame in the RX ring → written to the socket

	// Transfer is cand_spi_transfer_seconds{kind=op, completion=…}: CS-down → CS-up
	// of each SPI transfer, indexed [op][completion].
	Transfer [mcp2515.NumOps][NumCompletions]*Histogram

	RXFrames         *Counter // cand_rx_frames_total
	TXFrames         *Counter // cand_tx_frames_total
	RXBytes          *Counter // cand_rx_bytes_total (data bytes)
	TXBytes          *Counter // cand_tx_bytes_total (data bytes)
	RXBits           *Counter // cand_rx_bit_times_total: bit times on the wire of received frames, stuffing and intermission included
	TXBits           *Counter // cand_tx_bit_times_total: bit times on the wire of transmitted frames, stuffing and intermission included
	RXOverflows      *Counter // cand_rx_overflows_total: overflow events (RXnOVR seen set), not frames
	TXDropped        *Counter // cand_tx_dropped_total
	TXUnsentAtExit   *Counter // cand_tx_unsent_at_exit_total: frames left in the socket queue when cand stopped
	ErrorFrames      *Counter // cand_error_frames_total
	BusOffs          *Counter // cand_bus_off_total
	ChipResets       *Counter // cand_chip_resets_total
	Restarts         *Counter // cand_restarts_total: restarts after bus-off (restart_ms or manual)
	IntStorms        *Counter // cand_int_storms_total: INT found stuck low with no flag set
	SocketErrors     *Counter // cand_socket_errors_total: socket errors other than a full queue (logged with their cause)
	Interrupts       *Counter // cand_interrupts_total
	SocketDrops      *Counter // cand_socket_drops_total (SO_RXQ_OVFL)
	RXOrderUncertain *Counter // cand_rx_order_uncertain_total
	RXInvalidReads   *Counter // cand_rx_invalid_reads_total: RX buffer read-backs that were no frame, dropped
	SPIBytes         *Counter // cand_spi_bytes_total
	SPIErrors        *Counter // cand_spi_errors_total
	SocketWriteErrs  *Counter // cand_rx_socket_errors_total: frames the socket refused (ENOBUFS/EAGAIN)
	TXInvalid        *Counter // cand_tx_invalid_total: records read from the socket that are no CAN 2.0 frame
	MessageErrors    *Counter // cand_message_errors_total (MERRF)
	IntEdges         *Counter // cand_int_edges_total: edge events read from the INT line
	IntEventsLost    *Counter // cand_int_events_lost_total: edge events the kernel dropped (seqno gaps)
	PolledInts       *Counter // cand_polled_interrupts_total: interrupts found by the INT poll window
	RXSPITransfers   *Counter // cand_rx_spi_transfers_total: SPI transfers spent in interrupt handling
	RXSPIBytes       *Counter // cand_rx_spi_bytes_total: bytes of those transfers
	Polls            *Counter // cand_waits_total{completion="poll"}
	Sleeps           *Counter // cand_waits_total{completion="sleep"}
	RXRingDrops      *Counter // cand_rx_ring_drops_total: frames lost to a full RX ring

	BusState *Gauge // cand_bus_state: a canstate.State, the kernel's CAN_STATE_* number
	TEC      *Gauge // cand_tec (transmit error counter)
	REC      *Gauge // cand_rec (receive error counter)
	// ChipUp is 1 while the MCP2515 answers on SPI, 0 while it is missing or not
	// answering (retried with back-off): cand_chip_up.
	ChipUp *Gauge
	// LinkUp is 1 while the SocketCAN interface is up and the controller on the
	// bus, 0 while the interface is down and cand holds the controller off the
	// bus: cand_link_up.
	LinkUp  *Gauge
	Bitrate *Gauge // cand_bitrate: the nominal bitrate configured, bit/s
	// RXRingHighWater is the most frames that waited in the RX ring at once:
	// cand_rx_ring_high_water.
	RXRingHighWater *Gauge
	SCLKHz          *Gauge // cand_spi_clock_hertz
	// SCLK reachable over the core clock's range (firmware scaling, unless pinned).
	SCLKMinHz, SCLKMaxHz *Gauge // cand_spi_clock_min_hertz, cand_spi_clock_max_hertz

	name, iface string
	created     time.Time
}

// Name returns the controller label value.
func (c *Controller) Name() string { return c.name }

// Interface returns the interface label value.
func (c *Controller) Interface() string { return c.iface }

func newController(name, iface string, created time.Time) *Controller {
	c := &Controller{
		IntToHandler:     new(Histogram),
		HandlerToCS:      new(Histogram),
		RXEndToEnd:       new(Histogram),
		IntHandled:       new(Histogram),
		TXSocketToRTS:    new(Histogram),
		TXSocketToDone:   new(Histogram),
		BothRXFull:       new(Histogram),
		RXChipToRing:     new(Histogram),
		RXRingToSocket:   new(Histogram),
		RXRingDrops:      new(Counter),
		RXRingHighWater:  new(Gauge),
		RXFrames:         new(Counter),
		TXFrames:         new(Counter),
		RXBytes:          new(Counter),
		TXBytes:          new(Counter),
		RXBits:           new(Counter),
		TXBits:           new(Counter),
		RXOverflows:      new(Counter),
		TXDropped:        new(Counter),
		TXUnsentAtExit:   new(Counter),
		ErrorFrames:      new(Counter),
		BusOffs:          new(Counter),
		ChipResets:       new(Counter),
		Restarts:         new(Counter),
		IntStorms:        new(Counter),
		SocketErrors:     new(Counter),
		Interrupts:       new(Counter),
		SocketDrops:      new(Counter),
		RXOrderUncertain: new(Counter),
		RXInvalidReads:   new(Counter),
		SPIBytes:         new(Counter),
		SPIErrors:        new(Counter),
		SocketWriteErrs:  new(Counter),
		TXInvalid:        new(Counter),
		MessageErrors:    new(Counter),
		IntEdges:         new(Counter),
		IntEventsLost:    new(Counter),
		PolledInts:       new(Counter),
		RXSPITransfers:   new(Counter),
		RXSPIBytes:       new(Counter),
		Polls:            new(Counter),
		Sleeps:           new(Counter),
		BusState:         new(Gauge),
		TEC:              new(Gauge),
		REC:              new(Gauge),
		ChipUp:           new(Gauge),
		LinkUp:           new(Gauge),
		Bitrate:          new(Gauge),
		SCLKHz:           new(Gauge),
		SCLKMinHz:        new(Gauge),
		SCLKMaxHz:        new(Gauge),
		name:             name,
		iface:            iface,
		created:          created,
	}
	for op := range c.Transfer {
		for comp := range c.Transfer[op] {
			c.Transfer[op][comp] = new(Histogram)
		}
	}
	return c
}

// ObserveTransfer records one SPI transfer of op that took ns nanoseconds from
// CS-down to CS-up and ended as comp, and counts its bytes.
func (c *Controller) ObserveTransfer(op mcp2515.Op, comp Completion, ns int64, bytes int) {
	c.ObserveTransferTime(op, comp, ns)
	c.SPIBytes.Add(uint64(bytes))
}

// ObserveTransferTime records one SPI transfer's CS-down to CS-up time only;
// its bytes are the caller's to count (SPIBytes).
func (c *Controller) ObserveTransferTime(op mcp2515.Op, comp Completion, ns int64) {
	if op < mcp2515.NumOps && comp < NumCompletions {
		c.Transfer[op][comp].Observe(ns)
	}
}
