package soc_test

import (
	"testing"

	"cand/hw/bcm2835"
	"cand/sim/soc"
)

type level bool

func (l *level) Level(int64) bool { return bool(*l) }

func TestGPIOModel(t *testing.T) {
	s := soc.New(core, bcm2835.SoCBCM2837)
	m := s.GPIO()
	g := bcm2835.NewGPIO(m, bcm2835.SoCBCM2837)

	// Reset pulls: GPIO0-8 up, 9-27 down, others none (read low).
	for pin, want := range map[int]bool{2: true, 8: true, 9: false, 27: false, 40: false} {
		if got := g.Level(pin); got != want {
			t.Errorf("unconnected input GPIO%d reads %v, want %v", pin, got, want)
		}
	}
	// Pull sequence (GPPUD, clock) changes what an unconnected input reads.
	if err := g.SetPull(40, bcm2835.PullUp); err != nil {
		t.Fatal(err)
	}
	if !g.Level(40) || m.PullOf(40) != bcm2835.PullUp {
		t.Errorf("GPIO40 with pull-up reads %v (pull %v), want high", g.Level(40), m.PullOf(40))
	}
	if m.Load(bcm2835.GPPUD) != 0 || m.Load(bcm2835.GPPUDCLK1) != 0 {
		t.Errorf("GPPUD/GPPUDCLK1 not cleared by the sequence: %#x %#x", m.Load(bcm2835.GPPUD), m.Load(bcm2835.GPPUDCLK1))
	}
	if _, err := g.Pull(40); err == nil {
		t.Error("Pull on a BCM2837 read back a pull; GPPUD is write-only")
	}
	// An attached source drives an input; an output reads back its latch.
	var int0 level
	if err := s.AttachInput(25, &int0); err != nil {
		t.Fatal(err)
	}
	if err := s.AttachInput(25, &int0); err == nil {
		t.Error("second source on one pin accepted")
	}
	if g.Level(25) {
		t.Error("GPIO25 reads high with its source low")
	}
	int0 = true
	if !g.Level(25) {
		t.Error("GPIO25 reads low with its source high")
	}
	g.Set(5) // latch high while still an input: reads the pull
	g.SetFunction(5, bcm2835.FselOutput)
	g.Clear(5)
	if g.Level(5) {
		t.Error("output GPIO5 reads high after Clear")
	}
	g.Set(5)
	if !g.Level(5) || g.Function(5) != bcm2835.FselOutput {
		t.Error("output GPIO5 reads low after Set")
	}
	g.Write(53, true)
	g.SetFunction(53, bcm2835.FselOutput)
	if got := m.Load(bcm2835.GPLEV1); got>>(53-32)&1 != 1 {
		t.Errorf("GPLEV1 = %#x, want bit 21 (GPIO53) set", got)
	}
	// Event registers are stored; GPEDS is write-1-to-clear. No 2711 registers here.
	m.Store(bcm2835.GPFEN0, 1<<25)
	if m.Load(bcm2835.GPFEN0) != 1<<25 {
		t.Error("GPFEN0 not stored")
	}
	if got := m.Load(bcm2835.GPIOPUPPDN0); got != 0x6770696f {
		t.Errorf("GPIO_PUP_PDN_CNTRL0 on a BCM2837 reads %#x, want \"gpio\" (0x6770696f)", got)
	}
}

func TestGPIOModelBCM2711Pulls(t *testing.T) {
	s := soc.New(500_000_000, bcm2835.SoCBCM2711)
	g := bcm2835.NewGPIO(s.GPIO(), bcm2835.SoCBCM2711)
	for _, c := range []struct {
		pin  int
		pull bcm2835.Pull
	}{{4, bcm2835.PullDown}, {17, bcm2835.PullUp}, {57, bcm2835.PullUp}, {9, bcm2835.PullOff}} {
		if err := g.SetPull(c.pin, c.pull); err != nil {
			t.Fatal(err)
		}
		if got, err := g.Pull(c.pin); err != nil || got != c.pull {
			t.Errorf("GPIO%d pull = %v, %v; want %v", c.pin, got, err, c.pull)
		}
		if got, want := g.Level(c.pin), c.pull == bcm2835.PullUp; got != want {
			t.Errorf("unconnected GPIO%d with pull %v reads %v", c.pin, c.pull, got)
		}
	}
	// Encoding: 01 up, 10 down (GPIO4 is bits 9:8 of reg 0, GPIO17 bits 3:2 of reg 1).
	if got := s.GPIO().Load(bcm2835.GPIOPUPPDN0) >> 8 & 3; got != 0b10 {
		t.Errorf("GPIO4 pull-down field = %02b, want 10", got)
	}
	if got := s.GPIO().Load(bcm2835.GPIOPUPPDN0+4) >> 2 & 3; got != 0b01 {
		t.Errorf("GPIO17 pull-up field = %02b, want 01", got)
	}
	if err := g.SetPull(58, bcm2835.PullUp); err == nil {
		t.Error("GPIO58 accepted on a BCM2711 (58 lines: 0..57)")
	}
}
