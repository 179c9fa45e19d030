package mcp2515

import "cand/canwire"

// The bus order of the two RX buffers' frames.
//
// With rollover (RXB0CTRL.BUKT, MCP2515 datasheet DS20001801J §4.2, figure 4-2) a
// frame goes to RXB0 if RXB0 is empty, else to RXB1 if RXB1 is empty, else it is
// lost (RX1OVR). Which of two full buffers holds the older frame is in no
// register; it follows from what the driver saw of the buffers, and from the bus.
// The driver keeps, per buffer, the last moment it knew it empty (rxEmpty: a READ
// STATUS showing its flag clear, the CS rise of its READ RX BUFFER, INT high). With
// both full, it reads both, then:
//
//   - RXB1 fills only while RXB0 is full. If RXB1 was known empty at or after the
//     moment RXB0 was last emptied, RXB1's frame came while RXB0 held its present
//     one: RXB0 is older. Exact.
//   - Otherwise, of the buffer emptied earlier ("first") and the other ("last"):
//     first's frame is the newer only if both frames came after last was emptied,
//     first's at least its own length on the wire later; it is the older only if
//     it came after first was emptied and last's frame at least last's length
//     after it. A frame's arrivals are at least its bit times apart
//     (canwire.Bits: the frame with its stuff bits and intermission), so when the
//     READ STATUS that found both full came sooner than that, one order is
//     excluded. Exact.
//   - If neither is excluded the order cannot be known: counted
//     (Stats.RXOrderUncertain, cand_rx_order_uncertain_total), and the order whose
//     window for the arrivals is the longer is taken.
//
// With acceptance filters RXB1 also takes frames of its own filters while RXB0 is
// empty (§4.5), so only the bus bounds apply.
//
// The bounds hold if the controller's clock (New's now) is the bus's time, or
// runs no slower and never steps back: CLOCK_MONOTONIC on a Pi; on the virtual Pi
// the time its hardware has reached (sim/clock Reached), exact at each register
// access (daemon/port.go says why not the host's time or the board's Now).

// minTransferNs is the shortest an n-byte transfer can take: at the chip's highest
// SPI clock, InstrMaxSCLK. A buffer read that began at t was freed no earlier than
// t + minTransferNs.
func minTransferNs(n int) int64 { return int64(n) * 8 * 1e9 / InstrMaxSCLK }

// rxEmpty is the last moment the driver knew an RX buffer empty: its place among
// the driver's observations (seq, exact) and a time no later than it (at).
type rxEmpty struct {
	seq uint64
	at  int64
}

// sawEmpty records that the buffers in mask (StatusRX0IF, StatusRX1IF) were empty
// at one moment no earlier than at.
func (c *Controller) sawEmpty(mask Status, at int64) {
	c.obs++
	for n := range 2 {
		if mask&StatusRXnIF(n) != 0 {
			c.rxEmpty[n] = rxEmpty{seq: c.obs, at: at}
		}
	}
}

// wireNs is the least time frame f takes on the bus, intermission included: its bit
// times at the nominal bitrate, less 1/32 for the 1.58 % oscillator tolerance CAN
// allows a transmitter. 0 without a bitrate.
func (c *Controller) wireNs(n int) int64 {
	if c.cfg.Bitrate == 0 {
		return 0
	}
	return int64(canwire.Bits(&c.frames[n])) * 31 * 1e9 / (32 * int64(c.cfg.Bitrate))
}

// rxb1First tells whether RXB1's frame (c.frames[1]) came before RXB0's, given when
// the buffers were last known empty before they were read (e0, e1) and a time no
// earlier than the READ STATUS that found both full (at).
func (c *Controller) rxb1First(e0, e1 rxEmpty, at int64) bool {
	direct := c.cfg.Filters != nil // RXB1 has filters of its own
	if !direct && e1.seq >= e0.seq {
		return false
	}
	first, last, f, l := e0, e1, 0, 1 // first: the buffer emptied earlier
	if e1.seq < e0.seq {
		first, last, f, l = e1, e0, 1, 0
	}
	firstNewerPossible := at-last.at >= c.wireNs(f)
	firstOlderPossible := at-first.at >= c.wireNs(l)
	switch {
	case !firstNewerPossible && firstOlderPossible:
		return f == 1
	case firstNewerPossible && !firstOlderPossible:
		return l == 1
	}
	c.stats.RXOrderUncertain++
	if last.at-first.at > at-last.at-c.wireNs(f) {
		return f == 1
	}
	return l == 1
}
