package kernelref

import (
	"go.einride.tech/can"

	"cand/mcp2515"
)

// startXmit is mcp251x_hard_start_xmit: with no frame pending or in flight the
// driver takes f, stops the queue and queues tx_work. It reports whether f was
// taken (the stack holds the next frame while the queue is stopped).
func (p *port) startXmit(f can.Frame, readNs int64) bool {
	if p.hasSkb || p.txLen != 0 || !p.queueAwake {
		return false
	}
	p.queueAwake = false // netif_stop_queue
	p.txSkb, p.hasSkb, p.txReadNs = f, true, readNs
	return true
}

// txWork is mcp251x_tx_work_handler: the pending frame goes to TXB0 with
// mcp251x_hw_tx, LOAD TX BUFFER of TXBDAT_OFF + len bytes (instruction, SIDH,
// SIDL, EID8, EID0, DLC | RTR, data) and RTS for TXB0 (1 byte); tx_len is then
// set until the TX-done interrupt. One buffer, one frame in flight.
func (p *port) txWork() error {
	if !p.hasSkb {
		return nil
	}
	f := p.txSkb
	p.hasSkb = false
	n := int(min(f.Length, 8))
	p.tx[0] = mcp2515.InstrLoadTxBuf | mcp2515.LoadTXB0SIDH
	mcp2515.PutID(p.tx[mcp2515.BufSIDH:mcp2515.BufSIDH+4], f.ID, f.IsExtended)
	p.tx[mcp2515.BufDLC] = uint8(n)
	if f.IsRemote {
		p.tx[mcp2515.BufDLC] |= byte(mcp2515.DLCRTR)
	}
	copy(p.tx[mcp2515.BufD0:], f.Data[:n])
	if err := p.trans(mcp2515.BufD0 + n); err != nil {
		return err
	}
	p.tx[0] = mcp2515.InstrRTS | mcp2515.RTSTXB0
	if err := p.trans(1); err != nil {
		return err
	}
	p.txLen = 1 + n
	return nil
}
