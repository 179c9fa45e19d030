package bcm2835_test

import (
	"strings"
	"testing"
	"time"

	"cand/hw/bcm2835"
	"cand/hw/pinout"
)

// csLog is an SPI slave that answers each byte with its complement and counts the
// chip select's edges and the bytes shifted while it was asserted.
type csLog struct {
	active          bool
	asserts, bytes  int
	releases, stray int
}

func (c *csLog) SetCS(active bool, at int64) {
	if active && !c.active {
		c.asserts++
	}
	if !active && c.active {
		c.releases++
	}
	c.active = active
}

func (c *csLog) Exchange(mosi byte, mode uint8, sclk uint32, at int64) byte {
	if !c.active {
		c.stray++
	}
	c.bytes++
	return ^mosi
}

// thenRig is a device on CE1 with csLog as its slave, and the log of the register
// accesses if logged.
func thenRig(t *testing.T, logged bool) (*bcm2835.Device, *csLog, *logRegs, *rig) {
	lr := &logRegs{}
	var wrap func(bcm2835.Regs[bcm2835.SPIReg]) bcm2835.Regs[bcm2835.SPIReg]
	if logged {
		wrap = func(in bcm2835.Regs[bcm2835.SPIReg]) bcm2835.Regs[bcm2835.SPIReg] { lr.r = in; return lr }
	}
	r := newRig(t, wrap, bcm2835.SPIOptions{})
	sl := &csLog{}
	if err := r.soc.AttachSPI(sl, pinout.PinCE1, false); err != nil {
		t.Fatal(err)
	}
	return r.device(t, ce1), sl, lr, r
}

var ce1 = bcm2835.DeviceConfig{ClockHz: 10_000_000, Mode: 0, CS: bcm2835.ChipSelect{Native: 1}}

// csStores are the CS register writes in a register log.
func csStores(log []string) []string {
	var s []string
	for _, a := range log {
		if strings.HasPrefix(a, "S00=") {
			s = append(s, a)
		}
	}
	return s
}

// TransferThen shifts the first part, asks for more, and shifts that much more under
// the same chip select, with TA set throughout: every byte in order, none lost at
// the FIFO's 64-byte boundary, one DONE at the end.
func TestTransferThen(t *testing.T) {
	for _, c := range []struct{ first, more int }{
		{6, 0}, {6, 1}, {6, 8}, {1, 63}, {60, 10}, {63, 1}, {64, 64}, {64, 136}, {14, 0},
	} {
		d, sl, lr, r := thenRig(t, true)
		size := c.first + c.more + 3 // room the transfer leaves unused
		tx, rx := make([]byte, size), make([]byte, size)
		for i := range tx {
			tx[i] = byte(i*7 + 1)
			rx[i] = 0xAA
		}
		lr.log = nil
		calls := 0
		var tm bcm2835.Timing
		n, err := d.TransferThen(tx, rx, c.first, func(head []byte) int {
			calls++
			if len(head) != c.first {
				t.Errorf("%+v: more got %d bytes, want %d", c, len(head), c.first)
			}
			for i := range head {
				if head[i] != ^tx[i] {
					t.Errorf("%+v: head[%d] = %#x, want %#x", c, i, head[i], ^tx[i])
				}
			}
			if !sl.active {
				t.Errorf("%+v: chip select released before more ran", c)
			}
			return c.more
		}, &tm)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		want := c.first + c.more
		if n != want || calls != 1 {
			t.Fatalf("%+v: %d bytes shifted, more called %d times; want %d and once", c, n, calls, want)
		}
		for i := range rx {
			w := byte(0xAA)
			if i < want {
				w = ^tx[i]
			}
			if rx[i] != w {
				t.Fatalf("%+v: rx[%d] = %#x, want %#x", c, i, rx[i], w)
			}
		}
		if sl.bytes != want || sl.asserts != 1 || sl.releases != 1 || sl.stray != 0 || sl.active {
			t.Errorf("%+v: slave saw %d bytes, %d asserts, %d releases, %d outside CS: want %d bytes in one assertion", c, sl.bytes, sl.asserts, sl.releases, sl.stray, want)
		}
		if tm.WireNs != int64(want)*d.ByteNs() {
			t.Errorf("%+v: WireNs %d, want %d", c, tm.WireNs, int64(want)*d.ByteNs())
		}
		if !(tm.CSDown < tm.FirstByte && tm.FirstByte <= tm.LastByte && tm.LastByte <= tm.CSUp) || tm.CSUp-tm.CSDown < tm.WireNs {
			t.Errorf("%+v: timing %+v", c, tm)
		}
		// CS written three times: CLEAR with TA off (the first transfer only), TA
		// on, DONE and CLEAR with TA off.
		if got, want := csStores(lr.log), []string{"S00=31", "S00=81", "S00=10031"}; !equal(got, want) {
			t.Errorf("%+v: CS writes %v, want %v (TA set from the first byte to the last)", c, got, want)
		}
		if st := r.soc.SPI0().Stats(); st.DoneWrites != 1 || st.Underflows != 0 || st.LostWrites != 0 || st.Aborted != 0 {
			t.Errorf("%+v: model stats %+v", c, st)
		}
	}
}

func TestTransferThenErrors(t *testing.T) {
	d, sl, _, _ := thenRig(t, false)
	more := func([]byte) int { return 0 }
	for _, c := range []struct {
		tx, rx []byte
		first  int
		more   func([]byte) int
		want   string
	}{
		{make([]byte, 4), make([]byte, 3), 2, more, "len(rx) == len(tx)"},
		{make([]byte, 4), nil, 2, more, "len(rx) == len(tx)"},
		{make([]byte, 4), make([]byte, 4), 0, more, "1 ≤ first ≤ len(tx)"},
		{make([]byte, 4), make([]byte, 4), 5, more, "1 ≤ first ≤ len(tx)"},
		{make([]byte, 4), make([]byte, 4), 2, nil, "use Transfer"},
	} {
		if n, err := d.TransferThen(c.tx, c.rx, c.first, c.more, nil); err == nil || n != 0 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("TransferThen(%d, %d, first %d): %d, %v; want 0 and an error saying %q", len(c.tx), len(c.rx), c.first, n, err, c.want)
		}
	}
	if sl.bytes != 0 || sl.asserts != 0 {
		t.Fatalf("rejected transfers shifted %d bytes, %d chip selects", sl.bytes, sl.asserts)
	}
	// more asking for more room than tx has: the first part completes, the chip
	// select is released, and the error says so.
	for _, k := range []int{3, -1} {
		sl.bytes, sl.asserts, sl.releases = 0, 0, 0
		n, err := d.TransferThen(make([]byte, 4), make([]byte, 4), 2, func([]byte) int { return k }, nil)
		if err == nil || n != 2 || !strings.Contains(err.Error(), "must return 0..len(tx)-first") {
			t.Errorf("more = %d: %d, %v; want 2 bytes and an error", k, n, err)
		}
		if sl.bytes != 2 || sl.asserts != 1 || sl.releases != 1 || sl.active {
			t.Errorf("more = %d: slave saw %d bytes, %d asserts, %d releases, active %v", k, sl.bytes, sl.asserts, sl.releases, sl.active)
		}
	}
}

// dlcMore is a more function of the kind the MCP2515 driver passes: no closure.
func dlcMore(head []byte) int { return int(head[len(head)-1] & 0x0F) }

func TestTransferThenDoesNotAllocate(t *testing.T) {
	d, _, _, _ := thenRig(t, false)
	tx, rx := make([]byte, 14), make([]byte, 14)
	tx[5] = 0xF7 // complemented by the slave: 8
	var tm bcm2835.Timing
	if a := testing.AllocsPerRun(50, func() {
		if n, err := d.TransferThen(tx, rx, 6, dlcMore, &tm); err != nil || n != 14 {
			panic(err)
		}
	}); a != 0 {
		t.Errorf("TransferThen: %v allocations", a)
	}
}

// Every byte in order at and around the FIFO's boundaries (48 is RXR's level, 64
// the FIFO), polled at 9.6 MHz and with sleeps at 1 MHz (a stated 10 µs wake-up,
// so the wait rule sleeps), one chip select and one DONE per transfer.
func TestTransferFIFOBoundaries(t *testing.T) {
	for _, clk := range []uint32{10_000_000, 1_000_000} {
		sleeps := 0
		r := newRig(t, nil, bcm2835.SPIOptions{Sleep: func(time.Duration) { sleeps++ }, WakeLatency: 10 * time.Microsecond})
		sl := &csLog{}
		if err := r.soc.AttachSPI(sl, pinout.PinCE1, false); err != nil {
			t.Fatal(err)
		}
		d := r.device(t, bcm2835.DeviceConfig{ClockHz: clk, CS: bcm2835.ChipSelect{Native: 1}})
		for _, n := range []int{1, 47, 48, 49, 63, 64, 65, 127, 128, 129, 200} {
			sl.bytes, sl.asserts, sl.releases = 0, 0, 0
			done := r.soc.SPI0().Stats().DoneWrites
			tx, rx := make([]byte, n), make([]byte, n)
			for i := range tx {
				tx[i] = byte(i*13 + n)
			}
			if err := d.Transfer(tx, rx, nil); err != nil {
				t.Fatalf("%d Hz, %d bytes: %v", clk, n, err)
			}
			for i := range rx {
				if rx[i] != ^tx[i] {
					t.Fatalf("%d Hz, %d bytes: rx[%d] = %#x, want %#x", clk, n, i, rx[i], ^tx[i])
				}
			}
			st := r.soc.SPI0().Stats()
			if sl.bytes != n || sl.asserts != 1 || sl.releases != 1 || sl.stray != 0 || st.DoneWrites != done+1 || st.Underflows != 0 || st.LostWrites != 0 || st.Aborted != 0 {
				t.Errorf("%d Hz, %d bytes: slave saw %d bytes in %d/%d chip selects (%d outside), model %+v", clk, n, sl.bytes, sl.asserts, sl.releases, sl.stray, st)
			}
		}
		if clk == 1_000_000 && sleeps == 0 {
			t.Errorf("1 MHz with a 10 µs wake-up: no transfer slept")
		}
	}
}
