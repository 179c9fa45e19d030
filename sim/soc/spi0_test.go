package soc_test

import (
	"testing"

	"cand/hw/bcm2835"
	"cand/hw/pinout"
	"cand/internal/mono"
	"cand/sim/soc"
)

const core = 250_000_000

func TestSPI0ResetAndStoredRegisters(t *testing.T) {
	s := soc.New(core, bcm2835.SoCBCM2837)
	r := s.SPI0()
	// BCM2835 ARM Peripherals §10.5: REN and TXD reset to 1, every other bit to 0.
	if got, want := bcm2835.LoadCS(r), bcm2835.CS(0x00041000); got != want {
		t.Fatalf("CS after reset = %#08x, want %#08x (REN, TXD)", got, want)
	}
	r.Store(bcm2835.SPICLK, 0x1234_0026)
	r.Store(bcm2835.SPIDLEN, 0xABCD_0002)
	r.Store(bcm2835.SPILTOH, 0xFF)
	r.Store(bcm2835.SPIDC, 0x30201000)
	for _, c := range []struct {
		off  bcm2835.SPIReg
		want uint32
	}{{bcm2835.SPICLK, 0x26}, {bcm2835.SPIDLEN, 2}, {bcm2835.SPILTOH, 0xF}, {bcm2835.SPIDC, 0x30201000}} {
		if got := r.Load(c.off); got != c.want {
			t.Errorf("register %#x = %#x, want %#x", c.off, got, c.want)
		}
	}
	// FIFO writes without TA are lost; CLEAR bits and status bits are not stored.
	r.Store(bcm2835.SPIFIFO, 0x55)
	bcm2835.StoreCS(r, bcm2835.CSCLEARRX|bcm2835.CSCLEARTX|bcm2835.CSRXD|bcm2835.CSCPOL|2)
	if got, want := bcm2835.LoadCS(r), bcm2835.CS(bcm2835.CSTXD|bcm2835.CSCPOL|2); got != want {
		t.Fatalf("CS = %#08x, want %#08x", got, want)
	}
	if st := r.Stats(); st.LostWrites != 1 || st.Bytes != 0 {
		t.Fatalf("stats = %+v, want 1 lost write, 0 bytes", st)
	}
	// TA with nothing to send: DONE at once.
	bcm2835.StoreCS(r, bcm2835.CSTA|3)
	if got, want := bcm2835.LoadCS(r), bcm2835.CS(bcm2835.CSTA|3|bcm2835.CSTXD|bcm2835.CSDONE); got != want {
		t.Fatalf("CS with TA and empty FIFOs = %#08x, want %#08x", got, want)
	}
	bcm2835.StoreCS(r, bcm2835.CSDONE)
	if st := r.Stats(); st.DoneWrites != 1 {
		t.Fatalf("DONE writes = %d, want 1", st.DoneWrites)
	}
	if got := r.Load(bcm2835.SPIFIFO); got != 0 || r.Stats().Underflows != 1 {
		t.Fatalf("empty RX FIFO read %#x underflows %d, want 0 and 1", got, r.Stats().Underflows)
	}
}

// The wire time of a transfer is 9 SCLK periods per byte: byte k of a back-to-back
// run completes 9(k+1)/SCLK after the run could start.
func TestSPI0WireTime(t *testing.T) {
	s := soc.New(core, bcm2835.SoCBCM2837)
	setALT0(s.GPIO(), pinout.PinCE0)
	var sl recorder
	sl.xor = 0xA5
	if err := s.AttachSPI(&sl, pinout.PinCE0, false); err != nil {
		t.Fatal(err)
	}
	r := s.SPI0()
	const cdiv = 2500 // 100 kHz: 90 µs per byte, far longer than a FIFO write
	r.Store(bcm2835.SPICLK, cdiv)
	bcm2835.StoreCS(r, bcm2835.CSCLEARRX|bcm2835.CSCLEARTX)
	tx := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	bcm2835.StoreCS(r, bcm2835.CSTA)
	var wb, wa [8]int64 // each FIFO write happened between wb[k] and wa[k]
	for k, b := range tx {
		wb[k] = mono.Now()
		r.Store(bcm2835.SPIFIFO, uint32(b))
		wa[k] = mono.Now()
	}
	t0 := wb[0]
	waitCS(t, r, bcm2835.CSDONE)
	done := mono.Now()
	if sl.n != len(tx) {
		t.Fatalf("slave saw %d bytes, want %d", sl.n, len(tx))
	}
	byteNs := bcm2835.WireNs(core, cdiv, 1)
	if byteNs != 90000 {
		t.Fatalf("byte time %d ns, want 90000", byteNs)
	}
	// Byte k starts when byte k-1 is done or when it was written, whichever is later.
	if start := sl.at[0] - byteNs; start < wb[0] || start > wa[0] {
		t.Errorf("first byte started %d ns after its write began, want within the write (%d ns)", start-wb[0], wa[0]-wb[0])
	}
	for k := 1; k < len(tx); k++ {
		start := sl.at[k] - byteNs
		if wa[k] <= sl.at[k-1] {
			if start != sl.at[k-1] {
				t.Errorf("byte %d completed %d ns after byte %d, want exactly %d (written in time)", k, sl.at[k]-sl.at[k-1], k-1, byteNs)
			}
		} else if start < max(wb[k], sl.at[k-1]) || start > wa[k] {
			t.Errorf("byte %d (written late) started at %d, want between %d and %d", k, start, max(wb[k], sl.at[k-1]), wa[k])
		}
	}
	if wire := int64(len(tx)) * byteNs; done-t0 < wire {
		t.Errorf("DONE seen %d ns after the first write, before the wire time %d ns", done-t0, wire)
	}
	for k := range tx {
		if sl.got[k] != tx[k] || sl.sclk[k] != core/cdiv || sl.mode[k] != 0 {
			t.Errorf("byte %d: slave got %#x at %d Hz mode %d, want %#x at %d Hz mode 0", k, sl.got[k], sl.sclk[k], sl.mode[k], tx[k], core/cdiv)
		}
		if got := byte(r.Load(bcm2835.SPIFIFO)); got != tx[k]^0xA5 {
			t.Errorf("RX byte %d = %#x, want %#x", k, got, tx[k]^0xA5)
		}
	}
	if v := bcm2835.LoadCS(r); v&bcm2835.CSRXD != 0 {
		t.Errorf("RXD still set after reading every byte: CS = %#08x", v)
	}
}

// fillRX shifts 64 bytes to a slave on CE0 with TA and the extra CS bits set: once
// they are done, the RX FIFO is full.
func fillRX(extra bcm2835.CS) (*soc.SPI0Model, *recorder) {
	s := soc.New(core, bcm2835.SoCBCM2837)
	setALT0(s.GPIO(), pinout.PinCE0)
	sl := &recorder{}
	s.AttachSPI(sl, pinout.PinCE0, false)
	r := s.SPI0()
	r.Store(bcm2835.SPICLK, 2) // 125 MHz: 64 bytes in under 5 µs
	bcm2835.StoreCS(r, bcm2835.CSTA|extra|bcm2835.CSCLEARRX|bcm2835.CSCLEARTX)
	for i := range 64 {
		r.Store(bcm2835.SPIFIFO, uint32(i))
	}
	return r, sl
}

// TX halts while the RX FIFO is full, and resumes when a byte is read.
func TestSPI0TXHaltsWhenRXFull(t *testing.T) {
	r, sl := fillRX(0)
	v := waitCS(t, r, bcm2835.CSRXF|bcm2835.CSRXR|bcm2835.CSRXD|bcm2835.CSDONE)
	if v&bcm2835.CSTXD == 0 {
		t.Fatalf("TXD clear with an empty TX FIFO: CS = %#08x", v)
	}
	r.Store(bcm2835.SPIFIFO, 0xEE)
	// However long we wait, the 65th byte cannot start: RX has no room.
	deadline := mono.Now() + 20*bcm2835.WireNs(core, 2, 1)
	for mono.Now() < deadline {
		if v := bcm2835.LoadCS(r); v&bcm2835.CSDONE != 0 {
			t.Fatalf("DONE with a byte stuck behind a full RX FIFO: CS = %#08x", v)
		}
	}
	if sl.n != 64 {
		t.Fatalf("slave saw %d bytes with RX full, want 64", sl.n)
	}
	if got := r.Load(bcm2835.SPIFIFO); got != 0 {
		t.Fatalf("first RX byte %#x, want 0", got)
	}
	waitCS(t, r, bcm2835.CSDONE)
	if sl.n != 65 || sl.got[64] != 0xEE {
		t.Fatalf("after a read the slave saw %d bytes (last %#x), want 65 ending 0xEE", sl.n, sl.got[sl.n-1])
	}
}

// RXR ("RX FIFO needs reading") reads 0 while TA is clear, whatever the RX FIFO
// holds (§10.5); RXD and RXF keep showing the FIFO. REN holds what was written.
func TestSPI0RXRNeedsTA(t *testing.T) {
	r, _ := fillRX(bcm2835.CSREN)
	const fifo = bcm2835.CSRXF | bcm2835.CSRXR | bcm2835.CSRXD
	if v := waitCS(t, r, fifo|bcm2835.CSDONE); v&bcm2835.CSREN == 0 {
		t.Fatalf("CS = %#08x: REN written as 1 reads 0", v)
	}
	bcm2835.StoreCS(r, 0)
	if got, want := bcm2835.LoadCS(r), bcm2835.CS(bcm2835.CSRXF|bcm2835.CSRXD|bcm2835.CSTXD); got != want {
		t.Fatalf("CS with TA clear and a full RX FIFO = %#08x, want %#08x (no RXR, no REN)", got, want)
	}
	bcm2835.StoreCS(r, bcm2835.CSTA)
	if v := bcm2835.LoadCS(r); v&fifo != fifo {
		t.Fatalf("CS with TA set again = %#08x, want RXF, RXR and RXD", v)
	}
}

// CE levels follow TA, CS[1:0] and CSPOLn; a CE pin not in ALT0 does not drive.
func TestSPI0ChipEnables(t *testing.T) {
	s := soc.New(core, bcm2835.SoCBCM2837)
	g := bcm2835.NewGPIO(s.GPIO(), bcm2835.SoCBCM2837)
	r := s.SPI0()
	levels := func() (ce0, ce1 bool) { return g.Level(pinout.PinCE0), g.Level(pinout.PinCE1) }
	check := func(what string, want0, want1 bool) {
		t.Helper()
		if c0, c1 := levels(); c0 != want0 || c1 != want1 {
			t.Errorf("%s: CE0=%v CE1=%v, want %v %v", what, c0, c1, want0, want1)
		}
	}
	// Inputs with their reset pull-ups: both high.
	check("pins are inputs", true, true)
	g.SetFunction(pinout.PinCE0, bcm2835.FselAlt0)
	g.SetFunction(pinout.PinCE1, bcm2835.FselAlt0)
	g.SetPull(pinout.PinCE1, bcm2835.PullDown) // no effect on a pin SPI0 drives
	bcm2835.StoreCS(r, bcm2835.CSCSPOL1|3)
	check("idle, CE1 active-high", true, false)
	bcm2835.StoreCS(r, bcm2835.CSCSPOL1|bcm2835.CSTA|0)
	check("TA on CE0", false, false)
	bcm2835.StoreCS(r, bcm2835.CSCSPOL1|bcm2835.CSTA|1)
	check("TA on CE1", true, true)
	bcm2835.StoreCS(r, bcm2835.CSCSPOL1|bcm2835.CSTA|3)
	check("TA with CS none", true, false)
	g.SetFunction(pinout.PinCE0, bcm2835.FselInput)
	bcm2835.StoreCS(r, bcm2835.CSCSPOL1|bcm2835.CSTA|0)
	check("CE0 pin back to input (pulled up)", true, false)
}

// SPI modes reach the slave as CPOL<<1|CPHA.
func TestSPI0Modes(t *testing.T) {
	s := soc.New(core, bcm2835.SoCBCM2837)
	setALT0(s.GPIO(), pinout.PinCE0)
	var sl recorder
	s.AttachSPI(&sl, pinout.PinCE0, false)
	r := s.SPI0()
	r.Store(bcm2835.SPICLK, 26)
	for mode := range uint32(4) {
		bcm2835.StoreCS(r, bcm2835.CS(mode<<2)|bcm2835.CSCLEARRX|bcm2835.CSCLEARTX)
		bcm2835.StoreCS(r, bcm2835.CS(mode<<2)|bcm2835.CSTA)
		r.Store(bcm2835.SPIFIFO, mode)
		waitCS(t, r, bcm2835.CSDONE)
		bcm2835.StoreCS(r, bcm2835.CS(mode<<2)|bcm2835.CSDONE)
	}
	for i := range 4 {
		if sl.mode[i] != uint8(i) || sl.got[i] != byte(i) {
			t.Errorf("byte %d: mode %d data %d, want mode %d", i, sl.mode[i], sl.got[i], i)
		}
	}
}

// Two slaves selected at once fight over MISO: counted, garbage returned.
func TestSPI0Contention(t *testing.T) {
	s := soc.New(core, bcm2835.SoCBCM2837)
	g := bcm2835.NewGPIO(s.GPIO(), bcm2835.SoCBCM2837)
	a, b := &recorder{xor: 0x0F}, &recorder{xor: 0xF0}
	s.AttachSPI(a, 20, true)
	s.AttachSPI(b, 21, true)
	g.Set(20)
	g.Set(21)
	g.SetFunction(20, bcm2835.FselOutput)
	g.SetFunction(21, bcm2835.FselOutput)
	r := s.SPI0()
	r.Store(bcm2835.SPICLK, 26)
	bcm2835.StoreCS(r, bcm2835.CSTA|3)
	r.Store(bcm2835.SPIFIFO, 0x33)
	waitCS(t, r, bcm2835.CSDONE)
	if got, want := byte(r.Load(bcm2835.SPIFIFO)), byte(0x33^0x0F)&(0x33^0xF0); got != want {
		t.Errorf("MISO under contention = %#x, want the AND %#x", got, want)
	}
	if st := r.Stats(); st.Contention != 1 {
		t.Errorf("contention count %d, want 1", st.Contention)
	}
	// Nobody selected: MISO floats high.
	g.Clear(20)
	g.Clear(21)
	r.Store(bcm2835.SPIFIFO, 0x33)
	waitCS(t, r, bcm2835.CSDONE)
	if got := r.Load(bcm2835.SPIFIFO); got != 0xFF {
		t.Errorf("MISO with no slave selected = %#x, want 0xFF", got)
	}
}
