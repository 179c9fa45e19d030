package soc

import (
	"sync/atomic"

	"cand/hw/bcm2835"
	"cand/sim/clock"
)

// csWritable are the CS bits that hold what software wrote. RXF, RXR, TXD, RXD and
// DONE are computed from the FIFOs and the shifter; CLEAR_RX/CLEAR_TX are actions
// that read back as 0. After reset every writable bit is 0 but REN, which is 1
// (BCM2835 ARM Peripherals §10.5, CS register: reset value 0x00041000 with TXD).
const csWritable = bcm2835.CSLENLONG | bcm2835.CSDMALEN | bcm2835.CSCSPOL2 | bcm2835.CSCSPOL1 |
	bcm2835.CSCSPOL0 | bcm2835.CSLEN | bcm2835.CSREN | bcm2835.CSADCS | bcm2835.CSINTR |
	bcm2835.CSINTD | bcm2835.CSDMAEN | bcm2835.CSTA | bcm2835.CSCSPOL | bcm2835.CSCPOL |
	bcm2835.CSCPHA | bcm2835.CSCSMask

// ceBits are the CS bits that decide the CE lines' levels.
const ceBits = bcm2835.CSTA | bcm2835.CSCSMask | bcm2835.CSCSPOL | bcm2835.CSCSPOL0 |
	bcm2835.CSCSPOL1 | bcm2835.CSCSPOL2

// SPI0Model is the SPI0 block at register level, in polled (non-DMA) mode.
//
// The shifter takes real wire time. It is evaluated lazily against the SoC's clock
// (sim/clock: host time minus host stalls of the CPU thread) on every register
// access (SPI0's or GPIO's), with no goroutine: a byte starts when it is in the TX
// FIFO, TA is set, the previous byte is done and the RX FIFO has
// room (TX halts when RX is full, as on silicon); back-to-back bytes form a run in
// which byte k completes 9·(k+1) SCLK periods after the run could start. For each
// completed byte the selected slave's Exchange is called with the completion time
// and its MISO byte is pushed into the RX FIFO.
//
// CE lines (as measured in
// https://dibase.co.uk/blog/bcm2835_spi0_peripheral_documentation_errors): with
// TA=0 every CE is inactive; with TA=1 the CE selected by CS[1:0] is active. A CE's
// active level is high when its CSPOLn bit is set; the global CSPOL bit is modelled
// as applying to every CE (OR-ed with CSPOLn) — the driver leaves it 0.
//
// DONE written as 1 is accepted and counted (the kernel writes it at the end of
// every transfer: the hardware is said to break otherwise, a failure this model does
// not reproduce). Not modelled: DMA mode (DMAEN, DLEN counting, 32-bit FIFO access),
// LoSSI, 3-wire (REN only stored), interrupts (INTR/INTD only stored), ADCS.
//
// Like the silicon it models, it is driven by one thread: the owner thread's
// register accesses. Counters may be read from anywhere.
type SPI0Model struct {
	soc *SoC

	cs                  bcm2835.CS // the writable bits but REN
	clk, dlen, ltoh, dc uint32
	renOff              bool // REN written as 0 (it is 1 after reset; no effect here)
	tx, rx              fifo

	taAt      int64 // TA set
	rxFreedAt int64 // the RX FIFO last stopped being full
	lastEnd   int64 // previous byte done

	busy   bool
	shMOSI byte
	shEnd  int64

	runStart int64
	runK     int64
	runDiv   uint32
	runCore  uint32

	bytes, contention, doneWrites, lostWrites, underflows, aborted atomic.Uint64
}

var _ bcm2835.Regs[bcm2835.SPIReg] = (*SPI0Model)(nil)

// SPI0Stats counts what the model saw.
type SPI0Stats struct {
	Bytes      uint64 // bytes shifted
	Contention uint64 // bytes shifted with two or more slaves selected (MISO garbage)
	DoneWrites uint64 // CS writes with DONE = 1 (the end-of-transfer quirk)
	LostWrites uint64 // FIFO writes with TA clear or a full TX FIFO (dropped)
	Underflows uint64 // FIFO reads with the RX FIFO empty (read 0)
	Aborted    uint64 // bytes cut off by clearing TA mid-byte
}

// Stats returns the counters.
func (m *SPI0Model) Stats() SPI0Stats {
	return SPI0Stats{
		Bytes: m.bytes.Load(), Contention: m.contention.Load(), DoneWrites: m.doneWrites.Load(),
		LostWrites: m.lostWrites.Load(), Underflows: m.underflows.Load(), Aborted: m.aborted.Load(),
	}
}

// SCLKHz is the SPI clock the CLK register currently gives.
func (m *SPI0Model) SCLKHz() uint32 { return bcm2835.SCLK(m.soc.coreHz, m.clk) }

// ByteNs is the wire time of one byte (9 SCLK periods) at the current CLK.
func (m *SPI0Model) ByteNs() int64 { return bcm2835.WireNs(m.soc.coreHz, m.clk, 1) }

func (m *SPI0Model) mode() uint8 { return uint8(m.cs>>2) & 3 }

// advance runs the shifter up to now.
func (m *SPI0Model) advance(now int64) {
	for m.cs&bcm2835.CSTA != 0 {
		if m.busy {
			if now < m.shEnd {
				return
			}
			miso := m.soc.exchange(m.shMOSI, m.mode(), m.SCLKHz(), m.shEnd)
			m.rx.push(miso, m.shEnd)
			m.bytes.Add(1)
			m.busy = false
			m.lastEnd = m.shEnd
			continue
		}
		if m.tx.n == 0 || m.rx.full() {
			return
		}
		b, at := m.tx.pop()
		start := max(at, m.lastEnd, m.rxFreedAt, m.taAt)
		div := bcm2835.EffectiveDivider(m.clk)
		if start != m.lastEnd || div != m.runDiv || m.soc.coreHz != m.runCore {
			m.runStart, m.runK, m.runDiv, m.runCore = start, 0, div, m.soc.coreHz
		} else {
			m.runK++
		}
		m.shEnd = m.runStart + bcm2835.WireNs(m.runCore, m.runDiv, int(m.runK+1))
		m.shMOSI = b
		m.busy = true
	}
}

// commit tells the clock the time the bytes in flight will be done by (ignoring
// a full RX FIFO, which only makes it later): a CPU that sleeps through the
// transfer waits for the wire, and that time is never taken out (sim/clock).
func (m *SPI0Model) commit(now int64) {
	end := now
	if m.busy {
		end = m.shEnd
	}
	m.soc.clk.Commit(end + int64(m.tx.n)*m.ByteNs())
}

// flags computes the status bits of CS.
func (m *SPI0Model) flags() bcm2835.CS {
	var f bcm2835.CS
	if !m.tx.full() {
		f |= bcm2835.CSTXD
	}
	if m.rx.n > 0 {
		f |= bcm2835.CSRXD
	}
	if m.rx.n >= 48 && m.cs&bcm2835.CSTA != 0 { // RXR is 0 while not active (TA = 0)
		f |= bcm2835.CSRXR
	}
	if m.rx.full() {
		f |= bcm2835.CSRXF
	}
	if m.cs&bcm2835.CSTA != 0 && m.tx.n == 0 && !m.busy {
		f |= bcm2835.CSDONE
	}
	return f
}

// ceLevel is the level SPI0 drives on CE n (0 or 1).
func (m *SPI0Model) ceLevel(n int) bool {
	activeHigh := m.cs&bcm2835.CSCSPOLn(n) != 0 || m.cs&bcm2835.CSCSPOL != 0
	asserted := m.cs&bcm2835.CSTA != 0 && int(m.cs&bcm2835.CSCSMask) == n
	return asserted == activeHigh
}

func (m *SPI0Model) Load(off bcm2835.SPIReg) uint32 {
	now := m.soc.clk.AccessAt(clock.Site(siteSPI0, uint32(off), false))
	m.advance(now)
	switch off {
	case bcm2835.SPICS:
		v := m.cs | m.flags()
		if !m.renOff {
			v |= bcm2835.CSREN
		}
		return uint32(v)
	case bcm2835.SPIFIFO:
		if m.rx.n == 0 {
			m.underflows.Add(1)
			return 0
		}
		wasFull := m.rx.full()
		b, _ := m.rx.pop()
		if wasFull {
			m.rxFreedAt = now
		}
		return uint32(b)
	case bcm2835.SPICLK:
		return m.clk
	case bcm2835.SPIDLEN:
		return m.dlen
	case bcm2835.SPILTOH:
		return m.ltoh
	case bcm2835.SPIDC:
		return m.dc
	}
	return 0
}

func (m *SPI0Model) Store(off bcm2835.SPIReg, v uint32) {
	now := m.soc.clk.AccessAt(clock.Site(siteSPI0, uint32(off), true))
	m.advance(now)
	switch off {
	case bcm2835.SPICS:
		v := bcm2835.CS(v)
		if v&bcm2835.CSCLEARTX != 0 {
			m.tx.reset()
		}
		if v&bcm2835.CSCLEARRX != 0 {
			m.rx.reset()
		}
		if v&bcm2835.CSDONE != 0 {
			m.doneWrites.Add(1)
		}
		old := m.cs
		m.cs = v & csWritable &^ bcm2835.CSREN
		m.renOff = v&bcm2835.CSREN == 0
		switch {
		case old&bcm2835.CSTA == 0 && m.cs&bcm2835.CSTA != 0:
			m.taAt = now
		case old&bcm2835.CSTA != 0 && m.cs&bcm2835.CSTA == 0:
			if m.busy {
				m.busy = false
				m.aborted.Add(1)
			}
		}
		if (old^m.cs)&ceBits != 0 {
			m.soc.updateCS(now)
		}
	case bcm2835.SPIFIFO:
		if m.cs&bcm2835.CSTA == 0 || m.tx.full() {
			m.lostWrites.Add(1)
			return
		}
		m.tx.push(byte(v), now)
		m.advance(now)
		m.commit(now)
	case bcm2835.SPICLK:
		m.clk = v & 0xFFFF
	case bcm2835.SPIDLEN:
		m.dlen = v & 0xFFFF
	case bcm2835.SPILTOH:
		m.ltoh = v & 0xF
	case bcm2835.SPIDC:
		m.dc = v
	}
}
