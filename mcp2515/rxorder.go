package mcp2515

// The bus order of the two RX buffers' frames.
//
// With rollover (RXB0CTRL.BUKT, MCP2515 datasheet DS20001801J §4.2, figure 4-2) a
// frame goes to RXB0 if RXB0 is empty, else to RXB1 if RXB1 is empty, else it is
// lost (RX1OVR). Which of two full buffers holds the older frame is not in any
// register; it follows from what the driver saw, and from the bus:
//
//   - RXB1 fills only while RXB0 is full. If RXB1 was known empty at or after the
//     moment RXB0 was last emptied (a READ STATUS showing RX1IF clear, or RXB1 read,
//     after RXB0's READ RX BUFFER; or INT high), RXB1's frame came while RXB0 held
//     its present one: RXB0 is older. Exact.
//   - Otherwise RXB1 is older only if its frame came before RXB0 was last emptied,
//     and newer only if two frames arrived since (one refilling RXB0, one rolling
//     over). Two frames' arrivals are at least one shortest frame apart on the bus
//     (loadGapBits), so if the READ STATUS that found both full ended sooner than
//     that after RXB0 was freed (its READ RX BUFFER's CS rise, no earlier than
//     minTransferNs after the read began), RXB1 is older. Exact.
//   - Later than that both orders are possible: the read is counted
//     (Stats.RXOrderUncertain, cand_rx_order_uncertain_total) and the likelier order
//     taken: the one whose window for the arrivals is longer.
//
// With acceptance filters RXB1 also takes frames of its own filters while RXB0 is
// empty (§4.5), so only the bus bound applies: the buffer emptied earlier holds the
// older frame if the later-emptied one was emptied less than loadGapBits ago.

// loadGapBits is the shortest time between two frames' arrivals in bit times: a
// standard data frame with DLC 0 is 44 bits before stuffing, followed by the 3-bit
// intermission (ISO 11898-1), 47 in all; 3 bits less covers the 1.58 % oscillator
// tolerance CAN allows a transmitter.
const loadGapBits = 44

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
func (c *Controller) sawEmpty(mask byte, at int64) {
	c.obs++
	for n := range 2 {
		if mask&(StatusRX0IF<<n) != 0 {
			c.rxEmpty[n] = rxEmpty{seq: c.obs, at: at}
		}
	}
}

// rxb1First tells, with both RX buffers full, whether RXB1 holds the older frame.
func (c *Controller) rxb1First() bool {
	e0, e1 := c.rxEmpty[0], c.rxEmpty[1]
	direct := c.cfg.Filters != nil // RXB1 has filters of its own
	if !direct && e1.seq >= e0.seq {
		return false
	}
	first, last, firstIs1 := e0, e1, false // first: the buffer emptied earlier
	if e1.seq < e0.seq {
		first, last, firstIs1 = e1, e0, true
	}
	since := c.now() - last.at
	if since < c.loadGapNs {
		return firstIs1
	}
	c.stats.RXOrderUncertain++
	// The earlier-emptied buffer is older if its frame came between the two
	// moments, newer if both frames came at least loadGapNs apart since the later.
	if last.at-first.at > since-c.loadGapNs {
		return firstIs1
	}
	return !firstIs1
}
