package kernelref

import (
	"time"

	"go.einride.tech/can"

	"cand/hw/bcm2835"
	"cand/mcp2515"
	"cand/metrics"
	"cand/socketcan"
)

// Transport is one chip select's SPI transfer: a *bcm2835.Device.
type Transport interface {
	Transfer(tx, rx []byte, t *bcm2835.Timing) error
}

// rxBufLen is SPI_TRANSFER_BUF_LEN, 6 + CAN_FRAME_MAX_DATA_LEN: READ RX BUFFER
// reads the instruction byte and 13 register bytes whatever the frame's length.
const rxBufLen = 6 + 8

// CANINTE as mcp251x_set_normal_mode writes it: ERRIE | TX2IE | TX1IE | TX0IE |
// RX1IE | RX0IE (no MERRE, no WAKIE).
const canintE = mcp2515.IntERR | mcp2515.IntTX2 | mcp2515.IntTX1 | mcp2515.IntTX0 | mcp2515.IntRX1 | mcp2515.IntRX0

// Stats are one port's counters (safe to read while the driver runs).
type Stats struct {
	Interrupts  metrics.Counter // runs of mcp251x_can_ist
	RXFrames    metrics.Counter // frames handed on (netif_rx)
	TXFrames    metrics.Counter // TX-done interrupts handled for a frame in flight
	ISTXfers    metrics.Counter // spi_syncs in mcp251x_can_ist
	ISTBytes    metrics.Counter
	TXXfers     metrics.Counter // spi_syncs in mcp251x_tx_work_handler
	TXBytes     metrics.Counter
	Overflows   metrics.Counter // rx_over_errors: RX0OVR and RX1OVR bits seen with ERRIF
	ErrorFrames metrics.Counter // error skbs (mcp251x_error_skb)
	BusyNs      metrics.Counter // time in the IST and tx_work, virtual Pi's clock
	// LateNs is board time the driver spent beyond its charges and the wire's
	// time (all ports: boardCPU); 0 when the model is exact.
	LateNs metrics.Counter
	// HostStalls and HostStallNs count the pieces of host time of 20 µs or more
	// that passed on the board between two of the driver's spans (all ports:
	// boardCPU), time the clock did not take out; OverflowsAfterStall the
	// overflows found by a pass when one fell in it or the pass before.
	HostStalls, HostStallNs, OverflowsAfterStall metrics.Counter
	// RXEndToEnd is INT seen low → frame written to the socket, on the board's
	// clock (the same span as cand's rx_end_to_end).
	RXEndToEnd metrics.Histogram
	// TXSocketToDone is frame read from the socket → its TX-done handled, on the
	// board's clock.
	TXSocketToDone metrics.Histogram
}

// port is one MCP2515 as mcp251x keeps it (struct mcp251x_priv), with the hooks
// that put its frames out and charge its costs.
type port struct {
	spi   Transport
	costs Costs
	// charge spends d of the CPU on the board's clock (nil: free, for tests).
	charge func(d time.Duration)
	// cs marks a transfer's CS down on the board's clock, and up ends it d
	// later (nil: free, for tests): a transfer's chip select rises at its
	// CS-down time + its wire time + InCS.
	cs     func() mark
	up     func(m mark, d int64)
	byteNs int64        // one byte's wire time at the device's SCLK
	now    func() int64 // the board's time, for the latency stages (nil: none)
	st     *Stats
	// quit is priv->force_quit: the handler's pass loop ends when it is set.
	quit func() bool
	// edge is the board time INT was last found going low, as a logic analyzer
	// on the line sees it (nil: none): each pass's frames are timed from it.
	edge func() int64
	// stalls is the count of host stalls so far (nil: none); stall0 and stall1
	// its value at the start of the previous pass and of this one.
	stalls         func() uint64
	stall0, stall1 uint64
	// deliver hands a received frame on (netif_rx), errFrame an error frame.
	deliver  func(f *can.Frame)
	errFrame func(e *socketcan.ErrorFrame)

	tx, rx [rxBufLen]byte
	t      bcm2835.Timing
	inIST  bool // in a run of mcp251x_can_ist (its transfers count there)

	state      state
	edgeNs     int64     // board time INT was seen low, for RXEndToEnd
	txSkb      can.Frame // the frame ndo_start_xmit took (priv->tx_skb)
	hasSkb     bool
	txLen      int   // priv->tx_len: a frame is in TXB0
	txReadNs   int64 // board time the frame was read from the socket
	queueAwake bool  // netif queue: the stack may hand the next frame
}

// state is the bus state as mcp251x_can_ist computes it from EFLG.
type state uint8

const (
	stateActive state = iota
	stateWarning
	statePassive
	stateBusOff
)

func (p *port) spend(d time.Duration) {
	if p.charge != nil && d > 0 {
		p.charge(d)
	}
}

// trans is mcp251x_spi_trans: one spi_sync of n bytes, full duplex. It costs
// SyncSetup, then from CS down the bytes' wire time and InCS (whatever the SPI
// engine's own work took of that time: the calibrated InCS holds the kernel's),
// then SyncReturn.
func (p *port) trans(n int) error {
	p.spend(p.costs.SyncSetup)
	var m mark
	if p.cs != nil {
		m = p.cs()
	}
	err := p.spi.Transfer(p.tx[:n], p.rx[:n], &p.t)
	if p.up != nil {
		p.up(m, int64(n)*p.byteNs+int64(p.costs.InCS))
	} else {
		p.spend(p.costs.InCS)
	}
	p.spend(p.costs.SyncReturn)
	if p.inIST {
		p.st.ISTXfers.Inc()
		p.st.ISTBytes.Add(uint64(n))
	} else {
		p.st.TXXfers.Inc()
		p.st.TXBytes.Add(uint64(n))
	}
	return err
}

// read2 is mcp251x_read_2regs: READ reg, two data bytes (4 bytes).
func (p *port) read2(reg mcp2515.Addr) (v1, v2 mcp2515.Bits, err error) {
	p.tx[0], p.tx[1], p.tx[2], p.tx[3] = mcp2515.InstrRead, byte(reg), 0, 0
	err = p.trans(4)
	return mcp2515.Bits(p.rx[2]), mcp2515.Bits(p.rx[3]), err
}

// readReg is mcp251x_read_reg: READ reg, one data byte (3 bytes).
func (p *port) readReg(reg mcp2515.Addr) (mcp2515.Bits, error) {
	p.tx[0], p.tx[1], p.tx[2] = mcp2515.InstrRead, byte(reg), 0
	err := p.trans(3)
	return mcp2515.Bits(p.rx[2]), err
}

// writeReg is mcp251x_write_reg: WRITE reg, value (3 bytes).
func (p *port) writeReg(reg mcp2515.Addr, v mcp2515.Bits) error {
	p.tx[0], p.tx[1], p.tx[2] = mcp2515.InstrWrite, byte(reg), byte(v)
	return p.trans(3)
}

// writeBits is mcp251x_write_bits: BIT MODIFY reg, mask, value (4 bytes).
func (p *port) writeBits(reg mcp2515.Addr, mask, v mcp2515.Bits) error {
	p.tx[0], p.tx[1], p.tx[2], p.tx[3] = mcp2515.InstrBitModify, byte(reg), byte(mask), byte(v)
	return p.trans(4)
}

// hwRx is mcp251x_hw_rx with mcp251x_hw_rx_frame on an MCP2515 behind a
// full-duplex controller: one READ RX BUFFER of SPI_TRANSFER_BUF_LEN bytes (the
// chip clears RXnIF when CS rises), the frame decoded, then netif_rx.
func (p *port) hwRx(n int) error {
	clear(p.tx[:rxBufLen])
	p.tx[0] = mcp2515.ReadRxBuf(n)
	if err := p.trans(rxBufLen); err != nil {
		return err
	}
	// rx[i] is the buffer's register at offset i from RXBnCTRL (READ RX BUFFER
	// starts at SIDH, after the instruction byte), as the kernel indexes its buf.
	b := &p.rx
	var f can.Frame
	f.ID, f.IsExtended = mcp2515.GetID(b[mcp2515.BufSIDH : mcp2515.BufSIDH+4])
	if f.IsExtended {
		f.IsRemote = mcp2515.Bits(b[mcp2515.BufDLC])&mcp2515.DLCRTR != 0
	} else {
		f.IsRemote = mcp2515.Bits(b[mcp2515.BufSIDL])&mcp2515.SIDLSRR != 0
	}
	f.Length = min(uint8(mcp2515.Bits(b[mcp2515.BufDLC])&mcp2515.DLCMask), 8) // can_cc_dlc2len
	copy(f.Data[:f.Length], b[mcp2515.BufD0:])
	if f.IsRemote {
		f.Data = can.Data{}
	}
	p.st.RXFrames.Inc()
	p.deliver(&f)
	if p.now != nil {
		p.st.RXEndToEnd.Observe(p.now() - p.edgeNs)
	}
	return nil
}

// ist is mcp251x_can_ist (with the 2022 receive-race fix, "can: mcp251x: Fix race
// condition on receive interrupt"), all its passes: per pass READ CANINTF+EFLG;
// RXB0 if flagged, then CANINTF+EFLG again if RXB1 was not flagged; RXB1 if
// flagged; BIT MODIFY CANINTF for error and TX flags; BIT MODIFY EFLG for
// overflow flags; the state and an error frame on ERRIF; the pass loop ends when
// no RX/TX/ERR flag was set. Bus-off with restart-ms 0 (the chip put to sleep) is
// not modelled: the scenarios restart. The loop runs while force_quit is clear
// (quit), as the kernel's does: under sustained traffic it may never find the
// flags clear.
func (p *port) ist() error {
	p.istBegin()
	for {
		done, err := p.istPass()
		if done || err != nil {
			return err
		}
	}
}

// istBegin starts a run of the handler (the driver's mutex taken).
func (p *port) istBegin() {
	p.inIST = true
	p.st.Interrupts.Inc()
}

// istPass is one pass of mcp251x_can_ist's loop; done when the run has ended
// (the mutex given back).
func (p *port) istPass() (done bool, err error) {
	if p.quit != nil && p.quit() {
		p.inIST = false
		return true, nil
	}
	if p.edge != nil {
		p.edgeNs = p.edge()
	}
	if p.stalls != nil {
		p.stall0, p.stall1 = p.stall1, p.stalls()
	}
	if err := p.pass(); err != nil || !p.inIST {
		p.inIST = false
		return true, err
	}
	return false, nil
}

// pass is the body of one pass; it clears inIST when the loop breaks.
func (p *port) pass() error {
	intf, eflag, err := p.read2(mcp2515.RegCANINTF)
	if err != nil {
		return err
	}
	if intf&mcp2515.IntRX0 != 0 {
		if err := p.hwRx(0); err != nil {
			return err
		}
		if intf&mcp2515.IntRX1 == 0 {
			intf1, eflag1, err := p.read2(mcp2515.RegCANINTF)
			if err != nil {
				return err
			}
			intf |= intf1
			eflag |= eflag1
		}
	}
	if intf&mcp2515.IntRX1 != 0 {
		if err := p.hwRx(1); err != nil {
			return err
		}
	}
	intf &= mcp2515.IntRXAll | mcp2515.IntTXAll | mcp2515.IntERR
	if clr := intf & (mcp2515.IntERR | mcp2515.IntTXAll); clr != 0 {
		if err := p.writeBits(mcp2515.RegCANINTF, clr, 0); err != nil {
			return err
		}
	}
	if eflag&mcp2515.EFLGOVRMask != 0 {
		if err := p.writeBits(mcp2515.RegEFLG, eflag, 0); err != nil {
			return err
		}
	}
	p.errorState(intf, eflag)
	if intf == 0 {
		p.inIST = false
		return nil
	}
	if intf&mcp2515.IntTXAll != 0 {
		if p.txLen != 0 {
			p.st.TXFrames.Inc()
			if p.now != nil && p.txReadNs != 0 {
				p.st.TXSocketToDone.Observe(p.now() - p.txReadNs)
			}
			p.txLen = 0
		}
		p.queueAwake = true // netif_wake_queue
	}
	return nil
}

// errorState is mcp251x_can_ist's state update: the first of TXBO, TXEP, RXEP,
// TXWAR, RXWAR in EFLG sets the state; with ERRIF an error frame goes up, with
// the overflow bits counted and CAN_ERR_CRTL_RX_OVERFLOW added.
func (p *port) errorState(intf, eflag mcp2515.Bits) {
	var e socketcan.ErrorFrame
	p.state = stateActive
	for _, s := range [...]struct {
		bit   mcp2515.Bits
		state state
		class uint32 // the error frame's class
		crtl  uint8  // its CAN_ERR_CRTL_* bit, with class CAN_ERR_CRTL
	}{
		{mcp2515.EFLGTXBO, stateBusOff, socketcan.CAN_ERR_BUSOFF, 0},
		{mcp2515.EFLGTXEP, statePassive, socketcan.CAN_ERR_CRTL, socketcan.CAN_ERR_CRTL_TX_PASSIVE},
		{mcp2515.EFLGRXEP, statePassive, socketcan.CAN_ERR_CRTL, socketcan.CAN_ERR_CRTL_RX_PASSIVE},
		{mcp2515.EFLGTXWAR, stateWarning, socketcan.CAN_ERR_CRTL, socketcan.CAN_ERR_CRTL_TX_WARNING},
		{mcp2515.EFLGRXWAR, stateWarning, socketcan.CAN_ERR_CRTL, socketcan.CAN_ERR_CRTL_RX_WARNING},
	} {
		if eflag&s.bit != 0 {
			p.state = s.state
			e.Add(s.class)
			if s.crtl != 0 {
				e.Controller(s.crtl)
			}
			break
		}
	}
	if intf&mcp2515.IntERR == 0 {
		return
	}
	for _, ovr := range []mcp2515.Bits{mcp2515.EFLGRX0OVR, mcp2515.EFLGRX1OVR} {
		if eflag&ovr != 0 {
			p.st.Overflows.Inc()
			if p.stalls != nil && p.stalls() != p.stall0 {
				p.st.OverflowsAfterStall.Inc()
			}
			e.Controller(socketcan.CAN_ERR_CRTL_RX_OVERFLOW)
		}
	}
	p.st.ErrorFrames.Inc()
	p.errFrame(&e)
}
