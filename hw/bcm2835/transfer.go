package bcm2835

import (
	"fmt"
	"time"
)

// Timing is what one transfer measured, in ns of the board's time (SPIOptions.Clock, read by SPI.now).
type Timing struct {
	CSDown    int64 // chip select asserted (TA written, or the GPIO driven active)
	FirstByte int64 // first received byte seen in the RX FIFO
	LastByte  int64 // last received byte read
	CSUp      int64 // chip select released
	WireNs    int64 // expected wire time: the bytes shifted × 9 SCLK periods at the highest core clock
	Slept     bool  // the transfer slept instead of polling for part of its wait
	SleptNs   int64 // time spent in sleeps; the rest of CSDown → CSUp was polled or the engine's own work
}

// rxrLevel is how many bytes RXR guarantees are in the RX FIFO (¾ of 64).
const rxrLevel = 48

// Transfer asserts the device's chip select, shifts tx out while shifting len(tx)
// bytes into rx, and releases the chip select. rx may be nil for a write-only
// transfer; otherwise len(rx) must equal len(tx). t, if not nil, receives the
// transfer's timing. It does not allocate and takes no lock: one owner thread calls
// it (a Device is not safe for concurrent use).
//
// Sequence (polled mode, as the kernel's fast path but without its wake-ups):
// CLK if it differs from the last one written; GPIO chip select active; CS with
// this device's mode, CS field, every native CE's polarity and TA; then up to 64
// bytes into the TX FIFO before waiting. (The FIFOs are already empty: the
// previous transfer's last write cleared them; the first transfer clears them
// in a CS write of its own.) While running it drains RX and refills TX, keeping
// at most 64 bytes in flight so neither FIFO can overflow (TX halts when RX is
// full). A status read showing DONE means every byte written has been shifted
// in, so the bytes still to read are read without a status read each
// (BCM2835 ARM Peripherals §10.6.1, CS.DONE "transfer is complete"; the C
// library bcm2835's one-byte bcm2835_spi_transfer, airspayce.com/mikem/bcm2835,
// reads the FIFO once DONE is set the same way). A CPU as fast as the wire sees
// each byte's RXD before DONE and reads as before; one that falls behind saves a
// status read a byte. A wait for bytes in flight longer
// than the poll budget sleeps for the part of it a wake-up pays for and polls
// the rest (sleepPart, wait.go). At the end it waits for DONE (no read more if
// the last status read showed it) and writes CS with TA off, DONE and
// CLEAR_RX|CLEAR_TX in one write, as the kernel's bcm2835_spi_reset_hw does
// (drivers/spi/spi-bcm2835.c: "transmission sometimes breaks unless the DONE
// bit is written at the end of every transfer"), then releases a GPIO chip
// select.
func (d *Device) Transfer(tx, rx []byte, t *Timing) error {
	n := len(tx)
	if rx != nil && len(rx) != n {
		return fmt.Errorf("bcm2835: SPI0 transfer with %d bytes to send but a %d-byte receive buffer: pass rx nil or len(rx) == len(tx)", n, len(rx))
	}
	_, err := d.transfer(tx, rx, n, nil, t)
	return err
}

// TransferThen is a transfer whose length is decided while it runs: it asserts the
// chip select, shifts tx[:first] out and as many bytes into rx, and calls more with
// rx[:first]; more returns how many further bytes of tx (0 to len(tx)−first) to
// shift, the chip select still asserted, before it is released. It returns the
// bytes shifted. An MCP2515's READ RX BUFFER so reads a frame's header, then only
// the data bytes its DLC asks for (the chip increments the address while CS stays
// low: MCP2515 datasheet DS20001801J §12.4). TA stays set between the two parts,
// so the FIFO is only refilled: the second part costs one FIFO turnaround (the
// last byte's read, more, the first new byte's write), not a new transfer. more
// runs with the chip select held: it must be short, must not allocate and must not
// use the device. len(rx) must equal len(tx); t is as for Transfer. It does not
// allocate.
func (d *Device) TransferThen(tx, rx []byte, first int, more func(head []byte) int, t *Timing) (int, error) {
	if len(rx) != len(tx) {
		return 0, fmt.Errorf("bcm2835: SPI0 transfer with %d bytes to send but a %d-byte receive buffer: TransferThen reads what it sends, pass len(rx) == len(tx)", len(tx), len(rx))
	}
	if first < 1 || first > len(tx) {
		return 0, fmt.Errorf("bcm2835: SPI0 transfer whose first part is %d of %d bytes: pass 1 ≤ first ≤ len(tx)", first, len(tx))
	}
	if more == nil {
		return 0, fmt.Errorf("bcm2835: SPI0 TransferThen without a more function: pass one, or use Transfer for a fixed length")
	}
	return d.transfer(tx, rx, first, more, t)
}

// transfer is Transfer of tx[:first], then, if more is not nil, of the bytes more
// asks for, all under one chip select.
func (d *Device) transfer(tx, rx []byte, first int, more func([]byte) int, t *Timing) (int, error) {
	var scratch Timing
	if t == nil {
		t = &scratch
	}
	*t = Timing{WireNs: int64(first) * d.byteNs}
	if first == 0 {
		return 0, nil
	}
	s := d.spi
	r := s.regs
	cs := d.mode | d.csField | s.cspol

	if !s.clean {
		StoreCS(r, cs|CSCLEARRX|CSCLEARTX)
		s.clean = true
	}
	if !s.clkSet || s.clk != d.cdiv {
		r.Store(SPICLK, d.cdiv)
		s.clkSet, s.clk = true, d.cdiv
	}
	if d.gpioCS >= 0 {
		s.gpio.Write(d.gpioCS, d.activeLvl)
	}
	t.CSDown = s.now()
	StoreCS(r, cs|CSTA)
	s.clean = false
	var head []byte
	if rx != nil {
		head = rx[:first]
	}
	n := first
	got, last, done := d.shift(tx[:first], head, t.CSDown, t)
	var bad error
	if got == first && more != nil {
		switch k := more(head); {
		case k < 0 || k > len(tx)-first:
			bad = fmt.Errorf("bcm2835: SPI0 transfer of %d bytes asked for %d more with room for %d: the more function must return 0..len(tx)-first", first, k, len(tx)-first)
		case k > 0:
			n += k
			t.WireNs += int64(k) * d.byteNs
			var g int
			g, last, done = d.shift(tx[first:n], rx[first:n], last, t)
			got += g
		}
	}
	if got < n {
		return got, d.stuck(cs, n, got, t)
	}
	t.LastByte = last
	for !done && LoadCS(r)&CSDONE == 0 {
		if s.now()-last > stallFactor*d.slowByte+stallFloorNs && LoadCS(r)&CSDONE == 0 {
			return got, d.stuck(cs, n, got, t)
		}
	}
	StoreCS(r, cs|CSDONE|CSCLEARRX|CSCLEARTX)
	s.clean = true
	if d.gpioCS >= 0 {
		s.gpio.Write(d.gpioCS, !d.activeLvl)
	}
	t.CSUp = s.now()
	return n, bad
}

// shift clocks tx out and len(tx) bytes into rx (nil: discarded) with TA already
// set and the TX FIFO empty, start being when the first byte could start. It
// returns the bytes received (fewer than len(tx) if the controller stopped), when
// the last progress was seen, and whether its last status read showed DONE with
// every byte of tx written (no status read is needed to see the transfer done).
//
// It reads the clock when it waits, not per byte: a byte read counts as progress
// at the next clock read, and the last one at the one after the loop.
func (d *Device) shift(tx, rx []byte, start int64, t *Timing) (got int, last int64, done bool) {
	s := d.spi
	r := s.regs
	n := len(tx)
	txi := min(n, SPIFIFOSize)
	for _, b := range tx[:txi] {
		r.Store(SPIFIFO, uint32(b))
	}

	long := int64(n)*d.byteNs > s.budgetNs
	maySleep := long
	last = start
	watch, looked := start, start // the watch for progress began; the clock was last read
	moved := false                // bytes were read since the clock was last read
	rxi := 0
	for rxi < n {
		st := LoadCS(r)
		if st&CSRXD == 0 {
			now := s.now()
			if moved {
				moved = false
				last, watch = now, now
			} else if now-looked > stallAwayNs {
				watch += now - looked // away, not watching (spi.go, stall limits)
			}
			looked = now
			inflight := int64(txi - rxi)
			if now-watch > stallFactor*inflight*d.slowByte+stallFloorNs {
				// Look again after reading the clock: if this thread was
				// descheduled between the status read and the clock read,
				// the bytes may have arrived meanwhile.
				if LoadCS(r)&CSRXD != 0 {
					continue
				}
				return rxi, last, false
			}
			if maySleep {
				maySleep = false
				if sl := sleepPart(inflight*d.byteNs-(now-last), s.budgetNs, s.wakeNs); sl > 0 {
					t.Slept = true
					s.sleep(time.Duration(sl))
					t.SleptNs += s.now() - now
				}
			}
			continue
		}
		// How many bytes the status guarantees: all those in flight once DONE
		// (every byte written has been shifted in), else what RXF or RXR say, or one.
		k := 1
		switch {
		case st&CSDONE != 0:
			k = txi - rxi
		case st&CSRXF != 0:
			k = SPIFIFOSize
		case st&CSRXR != 0:
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
		rxi += k
		moved = true
		if t.FirstByte == 0 {
			t.FirstByte = s.now()
			last, watch, looked, moved = t.FirstByte, t.FirstByte, t.FirstByte, false
		}
		done = st&CSDONE != 0 && txi == n
		if txi < n {
			for txi < n && txi-rxi < SPIFIFOSize {
				r.Store(SPIFIFO, uint32(tx[txi]))
				txi++
			}
			maySleep = long
		}
	}
	if moved {
		last = s.now()
	}
	return rxi, last, done
}

// stuck abandons a transfer the controller stopped clocking: TA off, FIFOs cleared,
// DONE written, chip select released.
func (d *Device) stuck(cs CS, n, got int, t *Timing) error {
	s := d.spi
	st := LoadCS(s.regs)
	StoreCS(s.regs, cs|CSDONE|CSCLEARRX|CSCLEARTX)
	if d.gpioCS >= 0 {
		s.gpio.Write(d.gpioCS, !d.activeLvl)
	}
	t.CSUp = s.now()
	return fmt.Errorf("bcm2835: SPI0 stopped after %d of %d bytes (CS=%#08x, expected wire time %v at %d Hz SCLK): "+
		"the controller is not clocking — check that SPI0 is mapped at the right peripheral base, that the kernel's spi-bcm2835 "+
		"is not bound to it (disable dtparam=spi), and that the core clock is right",
		got, n, st, time.Duration(t.WireNs), d.sclkHz)
}
