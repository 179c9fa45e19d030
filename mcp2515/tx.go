package mcp2515

import (
	"errors"

	"go.einride.tech/can"
)

// ErrTXFull is returned by Transmit when no TX buffer can take a frame without
// breaking the order of the frames already pending.
var ErrTXFull = errors.New("mcp2515: no TX buffer free")

// TxFree reports whether Transmit would accept a frame now.
//
// The chip sends the pending buffer with the highest TXP first (on a tie, the
// highest buffer number), so frames keep their socket order only if each new frame
// gets a lower TXP than every pending one. With TXP 3..0 that allows up to three
// frames in flight; once the lowest priority is taken, the driver waits until the
// pending frames have gone and starts again at TXP 3.
func (c *Controller) TxFree() bool {
	if c.aborting {
		return false
	}
	if c.nPending == 0 {
		return true
	}
	return c.nPending < c.maxTX && c.lastPrio > 0
}

// Pending is the number of frames loaded and not yet reported sent.
func (c *Controller) Pending() int { return c.nPending }

// Transmit loads f into a free TX buffer and requests its transmission: LOAD TX
// BUFFER (5 + DLC + 1 bytes), then the 1-byte RTS instruction, so CS rises right
// after the request (erratum 5: CS held low after a TXREQ write can repeat the
// frame). It returns the buffer used.
func (c *Controller) Transmit(f *can.Frame) (int, error) {
	if !c.TxFree() {
		return -1, ErrTXFull
	}
	prio := byte(3)
	if c.nPending > 0 {
		prio = c.lastPrio - 1
	}
	buf := -1
	for i := 0; i < c.maxTX; i++ {
		if !c.txPending[i] {
			buf = i
			break
		}
	}
	if buf < 0 {
		return -1, ErrTXFull
	}
	// TXP is in TXBnCTRL, which LOAD TX BUFFER does not reach; it only needs writing
	// when it changes for this buffer.
	if c.txPrio[buf] != prio {
		if err := c.bitModify(TXBnCTRL(buf), TXBCTRLTXP, TXP(prio)); err != nil {
			return -1, err
		}
		c.txPrio[buf] = prio
	}
	n := int(f.Length)
	if n > 8 {
		n = 8
	}
	c.tx[0] = LoadTxBuf(buf)
	PutID(c.tx[1:5], f.ID, f.IsExtended)
	c.tx[5] = byte(n)
	if f.IsRemote {
		c.tx[5] |= byte(DLCRTR)
		n = 0
	}
	copy(c.tx[6:6+n], f.Data[:n])
	if err := c.spi.Transfer(OpLoadTxBuf, c.tx[:6+n], c.rx[:6+n]); err != nil {
		return -1, err
	}
	c.tx[0] = RTS(buf)
	if err := c.spi.Transfer(OpRTS, c.tx[:1], c.rx[:1]); err != nil {
		return -1, err
	}
	c.txPending[buf] = true
	c.nPending++
	c.lastPrio = prio
	return buf, nil
}

// txDone clears the TXnIF flags in st (one BIT MODIFY for all of them) and reports
// each finished buffer.
func (c *Controller) txDone(st Status, sink Sink) error {
	var mask Bits
	for i := 0; i < 3; i++ {
		if st&StatusTXnIF(i) != 0 {
			mask |= IntTXn(i)
		}
	}
	if err := c.bitModify(RegCANINTF, mask, 0); err != nil {
		return err
	}
	for i := 0; i < 3; i++ {
		if mask&IntTXn(i) != 0 && c.txPending[i] {
			c.txPending[i] = false
			c.nPending--
			sink.Transmitted(i)
		}
	}
	return nil
}

// txGone releases pending buffers whose TXREQ the chip cleared without setting
// TXnIF: the frame was aborted (ABAT) or failed in one-shot mode (error or lost
// arbitration). READ STATUS carries both bits, so this costs no transfer. Each such
// buffer is reported with TxFailed. Once an abort has released every buffer, ABAT is
// cleared (while it is set the chip aborts every new request too).
func (c *Controller) txGone(st Status, sink Sink) error {
	for i := 0; i < 3; i++ {
		if c.txPending[i] && st&StatusTXBnREQ(i) == 0 && st&StatusTXnIF(i) == 0 {
			c.txPending[i] = false
			c.nPending--
			sink.TxFailed(i)
		}
	}
	if c.aborting && c.nPending == 0 {
		if err := c.bitModify(RegCANCTRL, CANCTRLABAT, 0); err != nil {
			return err
		}
		c.aborting = false
	}
	return nil
}

// Abort requests the abort of every pending transmission (CANCTRL.ABAT): the TX
// timeout. The chip stops retrying them; the next HandleInterrupt pass releases them
// through Sink.TxFailed (a frame already on the wire may still complete: then it is
// reported as Transmitted). No new frame is accepted until all are released.
func (c *Controller) Abort() error {
	if c.nPending == 0 {
		return nil
	}
	if err := c.bitModify(RegCANCTRL, CANCTRLABAT, CANCTRLABAT); err != nil {
		return err
	}
	c.aborting = true
	return nil
}
