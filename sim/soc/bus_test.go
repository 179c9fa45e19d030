package soc_test

import (
	"bytes"
	"cand/hw/pinout"
	"testing"

	"cand/hw/bcm2835"
	"cand/sim/soc"
)

// board is a virtual Pi with SPI0's pins in ALT0 and the driver on top.
func board(t *testing.T) (*soc.SoC, *bcm2835.SPI) {
	t.Helper()
	s := soc.New(core, bcm2835.SoCBCM2837)
	g := bcm2835.NewGPIO(s.GPIO(), bcm2835.SoCBCM2837)
	spiPinsALT0(g)
	return s, bcm2835.NewSPI(s.SPI0(), g, bcm2835.SPIOptions{CoreClockHz: core})
}

func spiPinsALT0(g *bcm2835.GPIO) {
	for _, p := range []int{pinout.PinCE0, pinout.PinCE1, pinout.PinMISO, pinout.PinMOSI, pinout.PinSCLK} {
		g.SetFunction(p, bcm2835.FselAlt0)
	}
}

// Two slaves on one bus — CE0 active-low and a GPIO chip select active-high — each
// driven by its own Device in turn: every byte reaches only its own slave and every
// answer comes only from it.
func TestTwoSlavesNoCrossTalk(t *testing.T) {
	s, spi := board(t)
	a, b := &recorder{xor: 0x11}, &recorder{xor: 0x22}
	if err := s.AttachSPI(a, pinout.PinCE0, false); err != nil {
		t.Fatal(err)
	}
	if err := s.AttachSPI(b, 24, true); err != nil {
		t.Fatal(err)
	}
	da, err := spi.Device(bcm2835.DeviceConfig{ClockHz: 10_000_000, Mode: 0, CS: bcm2835.ChipSelect{Native: 0}})
	if err != nil {
		t.Fatal(err)
	}
	db, err := spi.Device(bcm2835.DeviceConfig{ClockHz: 4_000_000, Mode: 3, CS: bcm2835.ChipSelect{Native: -1, GPIO: 24, ActiveHigh: true}})
	if err != nil {
		t.Fatal(err)
	}
	if a.active || b.active || a.ncs != 0 || b.ncs != 0 {
		t.Fatalf("a slave was selected before any transfer: a %v/%d b %v/%d", a.active, a.ncs, b.active, b.ncs)
	}
	var wantA, wantB []byte
	rx := make([]byte, 20)
	for round := range 6 {
		d, sl, want := da, a, &wantA
		if round%2 == 1 {
			d, sl, want = db, b, &wantB
		}
		tx := make([]byte, 3+round*3)
		for i := range tx {
			tx[i] = byte(round*16 + i)
		}
		var tm bcm2835.Timing
		if err := d.Transfer(tx, rx[:len(tx)], &tm); err != nil {
			t.Fatal(err)
		}
		for i := range tx {
			if rx[i] != tx[i]^sl.xor {
				t.Fatalf("round %d byte %d: got %#x, want %#x from its own slave", round, i, rx[i], tx[i]^sl.xor)
			}
		}
		*want = append(*want, tx...)
		if a.active || b.active {
			t.Fatalf("round %d: chip select left active (a %v, b %v)", round, a.active, b.active)
		}
	}
	if !bytes.Equal(a.got[:a.n], wantA) || !bytes.Equal(b.got[:b.n], wantB) {
		t.Fatalf("slave A saw % x, want % x; slave B saw % x, want % x", a.got[:a.n], wantA, b.got[:b.n], wantB)
	}
	if a.strays+b.strays != 0 || s.SPI0().Stats().Contention != 0 {
		t.Fatalf("cross-talk: strays %d/%d, contention %d", a.strays, b.strays, s.SPI0().Stats().Contention)
	}
	// One select and one release per transfer, in order.
	for _, sl := range []*recorder{a, b} {
		if sl.ncs != 6 {
			t.Fatalf("slave saw %d chip-select changes, want 6", sl.ncs)
		}
		for i := 0; i < sl.ncs; i++ {
			if sl.cs[i].active != (i%2 == 0) {
				t.Fatalf("chip-select change %d: active=%v", i, sl.cs[i].active)
			}
		}
	}
	for i := 0; i < b.n; i++ {
		if b.mode[i] != 3 || b.sclk[i] != core/64 {
			t.Fatalf("slave B byte %d: mode %d at %d Hz, want mode 3 at %d Hz", i, b.mode[i], b.sclk[i], core/64)
		}
	}
}

// Native CE0 active-high and CE1 active-low at once: each CE idles at its own
// device's inactive level through the other's transfers. The devices are created
// before the CE pins go to ALT0: a CE idles high until its device sets CSPOLn, so
// an active-high slave would see a select pulse if the pin were switched first.
func TestMixedNativePolarities(t *testing.T) {
	s := soc.New(core, bcm2835.SoCBCM2837)
	g := bcm2835.NewGPIO(s.GPIO(), bcm2835.SoCBCM2837)
	g.SetPull(pinout.PinCE0, bcm2835.PullDown) // the active-high slave's idle level
	spi := bcm2835.NewSPI(s.SPI0(), g, bcm2835.SPIOptions{CoreClockHz: core})
	a, b := &recorder{xor: 1}, &recorder{xor: 2}
	s.AttachSPI(a, pinout.PinCE0, true)
	s.AttachSPI(b, pinout.PinCE1, false)
	da, err := spi.Device(bcm2835.DeviceConfig{ClockHz: 10_000_000, CS: bcm2835.ChipSelect{Native: 0, ActiveHigh: true}})
	if err != nil {
		t.Fatal(err)
	}
	db, err := spi.Device(bcm2835.DeviceConfig{ClockHz: 10_000_000, CS: bcm2835.ChipSelect{Native: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := spi.Device(bcm2835.DeviceConfig{ClockHz: 10_000_000, CS: bcm2835.ChipSelect{Native: 1, ActiveHigh: true}}); err == nil {
		t.Fatal("a second device of the opposite polarity on CE1 was accepted")
	}
	spiPinsALT0(g)
	if a.ncs+b.ncs != 0 {
		t.Fatalf("a slave saw its chip select move while configuring: a %d b %d changes", a.ncs, b.ncs)
	}
	rx := make([]byte, 2)
	for i := range 4 {
		d := da
		if i%2 == 1 {
			d = db
		}
		if err := d.Transfer([]byte{byte(i), 0xFF}, rx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if a.n != 4 || b.n != 4 || a.ncs != 4 || b.ncs != 4 || a.strays+b.strays != 0 {
		t.Fatalf("a: %d bytes %d CS changes; b: %d bytes %d CS changes; strays %d", a.n, a.ncs, b.n, b.ncs, a.strays+b.strays)
	}
	if a.got[0] != 0 || a.got[2] != 2 || b.got[0] != 1 || b.got[2] != 3 {
		t.Fatalf("bytes went to the wrong slave: a % x b % x", a.got[:4], b.got[:4])
	}
}

// A transfer longer than the FIFOs: 200 bytes in and out, byte for byte.
func TestLongTransfer(t *testing.T) {
	s, spi := board(t)
	sl := &recorder{xor: 0x5A}
	s.AttachSPI(sl, pinout.PinCE0, false)
	d, err := spi.Device(bcm2835.DeviceConfig{ClockHz: 10_000_000, CS: bcm2835.ChipSelect{Native: 0}})
	if err != nil {
		t.Fatal(err)
	}
	tx, rx := make([]byte, 200), make([]byte, 200)
	for i := range tx {
		tx[i] = byte(i * 7)
	}
	var tm bcm2835.Timing
	if err := d.Transfer(tx, rx, &tm); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sl.got[:sl.n], tx) {
		t.Fatalf("slave got % x", sl.got[:sl.n])
	}
	for i := range rx {
		if rx[i] != tx[i]^0x5A {
			t.Fatalf("rx[%d] = %#x, want %#x", i, rx[i], tx[i]^0x5A)
		}
	}
	if tm.CSUp-tm.CSDown < tm.WireNs {
		t.Fatalf("200 bytes took %d ns CS to CS, less than their wire time %d ns", tm.CSUp-tm.CSDown, tm.WireNs)
	}
	// Write-only: rx nil still drains RX so TX never halts.
	sl.reset()
	if err := d.Transfer(tx, nil, nil); err != nil {
		t.Fatal(err)
	}
	if sl.n != 200 {
		t.Fatalf("write-only transfer shifted %d bytes, want 200", sl.n)
	}
}

// Modes 0..3 reach the slave through the driver.
func TestDeviceModes(t *testing.T) {
	s, spi := board(t)
	sl := &recorder{}
	s.AttachSPI(sl, pinout.PinCE0, false)
	for mode := range uint8(4) {
		d, err := spi.Device(bcm2835.DeviceConfig{ClockHz: 10_000_000, Mode: mode, CS: bcm2835.ChipSelect{Native: 0}})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Transfer([]byte{mode, mode}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 8 {
		if sl.mode[i] != uint8(i/2) {
			t.Fatalf("byte %d shifted in mode %d, want %d", i, sl.mode[i], i/2)
		}
	}
}
