package sim

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"cand/hw/gpio"
	"cand/sim/canbus"
	"cand/sim/mcpchip"
	"cand/sim/soc"
)

// wiringRig is one chip behind its Wiring, driven byte by byte as SPI0 would.
type wiringRig struct {
	t    *testing.T
	bus  *canbus.Bus
	chip *mcpchip.Chip
	edge *soc.EdgeLine
	w    *Wiring
	at   int64
}

func newWiringRig(t *testing.T) *wiringRig {
	bus := canbus.New(500_000)
	chip := mcpchip.New(16_000_000, bus)
	edge, err := soc.NewEdgeLine(25)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { edge.Close() })
	w := newWiring(chip, edge, bus.Clock())
	chip.OnINT(func(level bool, at int64) {
		w.chipINT(level, at)
		bus.AfterUnlock(edge.Flush)
	})
	// Past the oscillator start-up time.
	return &wiringRig{t: t, bus: bus, chip: chip, edge: edge, w: w, at: bus.Clock().Now() + 1_000_000}
}

// transfer is one CS-low session: the bytes out, the bytes MISO carried back.
func (r *wiringRig) transfer(tx ...byte) []byte {
	r.w.SetCS(true, r.at)
	rx := make([]byte, len(tx))
	for i, b := range tx {
		r.at += 1000
		rx[i] = r.w.Exchange(b, 0, 1_000_000, r.at)
	}
	r.w.SetCS(false, r.at)
	r.at += 1000
	return rx
}

func (r *wiringRig) read(addr byte) byte { return r.transfer(0x03, addr, 0)[2] }

func (r *wiringRig) write(addr, v byte) { r.transfer(0x02, addr, v) }

func (r *wiringRig) events() []gpio.Event {
	var buf [16 * gpio.EventSize]byte
	n, err := unix.Read(r.edge.Fd(), buf[:])
	if errors.Is(err, unix.EAGAIN) {
		return nil
	}
	if err != nil {
		r.t.Fatal(err)
	}
	evs := make([]gpio.Event, n/gpio.EventSize)
	for i := range evs {
		evs[i].Decode(buf[i*gpio.EventSize:])
	}
	return evs
}

const (
	regCANSTAT = 0x0E
	regCNF1    = 0x2A
	regCANINTE = 0x2B
	regCANINTF = 0x2C
)

// MISO stuck reads as the stuck level, 0xFF or 0x00, but only MISO is at fault:
// what is sent meanwhile reaches the chip (a write sticks, a RESET resets it), and
// reconnected, it answers with what it was sent.
func TestWiringMISOStuck(t *testing.T) {
	r := newWiringRig(t)
	if got := r.read(regCANSTAT); got != 0x80 {
		t.Fatalf("CANSTAT %#02x, want 0x80 (Configuration mode after power-on)", got)
	}
	for i, stuck := range []byte{0xFF, 0x00} {
		r.w.MISOStuck(stuck)
		if got := r.transfer(0x03, regCANSTAT, 0, 0); got[0] != stuck || got[1] != stuck || got[2] != stuck || got[3] != stuck {
			t.Errorf("MISO stuck at %#02x: read % x", stuck, got)
		}
		r.write(regCNF1, 0x55+byte(i))
	}
	r.w.MISOConnected()
	if got := r.read(regCNF1); got != 0x56 {
		t.Errorf("CNF1 %#02x after writes of 0x55, 0x56 while MISO was stuck, want 0x56: the chip missed them", got)
	}
	r.w.MISOStuck(0x00)
	r.transfer(0xC0)  // RESET
	r.at += 1_000_000 // past the oscillator start-up time
	r.w.MISOConnected()
	if got := r.read(regCNF1); got != 0 {
		t.Errorf("CNF1 %#02x after a RESET sent while MISO was stuck, want 0 (reset)", got)
	}
}

// INT held low is one falling edge and a low level whatever the chip does; let go,
// the line follows the chip again, which may still hold it low.
func TestWiringINTHeldLow(t *testing.T) {
	r := newWiringRig(t)
	if !r.w.Level(r.at) {
		t.Fatal("INT low before any fault")
	}
	r.w.HoldINTLow(true)
	if r.w.Level(r.at) {
		t.Fatal("INT high while held low")
	}
	if evs := r.events(); len(evs) != 1 || evs[0].ID != gpio.EventFallingEdge {
		t.Fatalf("events %+v, want one falling edge", evs)
	}
	// The chip asserts INT too (a flag enabled in CANINTE): no second edge.
	r.write(regCANINTE, 0x01)
	r.write(regCANINTF, 0x01)
	if r.chip.Level(r.at) {
		t.Fatal("the chip does not assert INT with RX0IF set and enabled")
	}
	r.w.HoldINTLow(false)
	if r.w.Level(r.at) {
		t.Fatal("INT high while the chip holds it low")
	}
	if evs := r.events(); len(evs) != 0 {
		t.Fatalf("events %+v, want none: the line never rose", evs)
	}
	r.write(regCANINTF, 0x00)
	if !r.w.Level(r.at) {
		t.Fatal("INT low after the chip released it and the fault is gone")
	}
	r.write(regCANINTF, 0x01)
	if evs := r.events(); len(evs) != 1 || evs[0].ID != gpio.EventFallingEdge {
		t.Fatalf("events %+v, want the chip's falling edge", evs)
	}
}
