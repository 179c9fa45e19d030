package bcm2835

import (
	"fmt"
	"time"
)

// Timing is what one transfer measured, in ns of the board's time (SPIOptions.Clock).
type Timing struct {
	CSDown    int64 // chip select asserted (TA written, or the GPIO driven active)
	FirstByte int64 // first received byte seen in the RX FIFO
	LastByte  int64 // last received byte read
	CSUp      int64 // chip select released
	WireNs    int64 // expected wire time: n × 9 SCLK periods at the highest core clock
	Slept     bool  // the transfer slept instead of polling for part of its wait
}

// rxrLevel is how many bytes RXR guarantees are in the RX FIFO (¾ of 64).
const rxrLevel = 48

// Transfer asserts the device's chip select, shifts tx out while shifting len(tx)
// bytes into rx, and releases the chip select. rx may be nil for a write-only
// transfer; otherwise len(rx) must equal len(tx). t, if not nil, receives the
// transfer's timing. It does not allocate and takes no lock: one owner thread calls
// it (a Device is not safe for concurrent use).
//
// Sequence (polled mode, as the kernel's fast path but without its wake-ups): CS
// with this device's mode, CS field and every native CE's polarity, CLEAR_RX and
// CLEAR_TX; CLK; GPIO chip select active; TA; then up to 64 bytes into the TX FIFO
// before waiting. While running it drains RX and refills TX, keeping at most 64
// bytes in flight so neither FIFO can overflow (TX halts when RX is full). Waits
// for bytes in flight longer than the poll budget sleep for all but the budget.
// At the end it waits for DONE, clears TA and writes DONE (the controller's quirk:
// "transmission sometimes breaks unless DONE is written at the end of every
// transfer", kernel spi-bcm2835), then releases a GPIO chip select.
func (d *Device) Transfer(tx, rx []byte, t *Timing) error {
	n := len(tx)
	if rx != nil && len(rx) != n {
		return fmt.Errorf("bcm2835: SPI0 transfer with %d bytes to send but a %d-byte receive buffer: pass rx nil or len(rx) == len(tx)", n, len(rx))
	}
	var scratch Timing
	if t == nil {
		t = &scratch
	}
	*t = Timing{WireNs: int64(n) * d.byteNs}
	if n == 0 {
		return nil
	}
	s := d.spi
	r := s.regs
	cs := d.mode | d.csField | s.cspol

	r.Store(SPICS, cs|CSCLEARRX|CSCLEARTX)
	r.Store(SPICLK, d.cdiv)
	if d.gpioCS >= 0 {
		s.gpio.Write(d.gpioCS, d.activeLvl)
	}
	t.CSDown = s.clock.Now()
	r.Store(SPICS, cs|CSTA)
	txi := min(n, SPIFIFOSize)
	for _, b := range tx[:txi] {
		r.Store(SPIFIFO, uint32(b))
	}

	long := t.WireNs > s.budgetNs
	maySleep := long
	last := t.CSDown // last progress
	rxi := 0
	for rxi < n {
		st := r.Load(SPICS)
		if st&CSRXD == 0 {
			now := s.clock.Now()
			inflight := int64(txi - rxi)
			if now-last > stallFactor*inflight*d.slowByte+stallFloorNs {
				// Look again after reading the clock: if this thread was
				// descheduled between the status read and the clock read,
				// the bytes may have arrived meanwhile.
				if r.Load(SPICS)&CSRXD != 0 {
					continue
				}
				return d.stuck(cs, n, rxi, t)
			}
			if maySleep {
				maySleep = false
				if wait := inflight*d.byteNs - (now - last) - s.budgetNs; wait > 0 {
					t.Slept = true
					s.sleep(time.Duration(wait))
				}
			}
			continue
		}
		k := 1
		if st&CSRXF != 0 {
			k = SPIFIFOSize
		} else if st&CSRXR != 0 {
			k = rxrLevel
		}
		k = min(k, n-rxi)
		if rx != nil {
			for i := range rx[rxi : rxi+k] {
				rx[rxi+i] = byte(r.Load(SPIFIFO))
			}
		} else {
			for range k {
				r.Load(SPIFIFO)
			}
		}
		if rxi == 0 {
			t.FirstByte = s.clock.Now()
		}
		rxi += k
		last = s.clock.Now()
		if txi < n {
			for txi < n && txi-rxi < SPIFIFOSize {
				r.Store(SPIFIFO, uint32(tx[txi]))
				txi++
			}
			maySleep = long
		}
	}
	t.LastByte = last
	for r.Load(SPICS)&CSDONE == 0 {
		if s.clock.Now()-last > stallFactor*d.slowByte+stallFloorNs && r.Load(SPICS)&CSDONE == 0 {
			return d.stuck(cs, n, rxi, t)
		}
	}
	r.Store(SPICS, cs|CSDONE)
	if d.gpioCS >= 0 {
		s.gpio.Write(d.gpioCS, !d.activeLvl)
	}
	t.CSUp = s.clock.Now()
	return nil
}

// stuck abandons a transfer the controller stopped clocking: TA off, FIFOs cleared,
// DONE written, chip select released.
func (d *Device) stuck(cs uint32, n, got int, t *Timing) error {
	s := d.spi
	st := s.regs.Load(SPICS)
	s.regs.Store(SPICS, cs|CSDONE|CSCLEARRX|CSCLEARTX)
	if d.gpioCS >= 0 {
		s.gpio.Write(d.gpioCS, !d.activeLvl)
	}
	t.CSUp = s.clock.Now()
	return fmt.Errorf("bcm2835: SPI0 stopped after %d of %d bytes (CS=%#08x, expected wire time %v at %d Hz SCLK): "+
		"the controller is not clocking — check that SPI0 is mapped at the right peripheral base, that the kernel's spi-bcm2835 "+
		"is not bound to it (disable dtparam=spi), and that the core clock is right",
		got, n, st, time.Duration(t.WireNs), d.sclkHz)
}
