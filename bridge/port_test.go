package bridge

import (
	"testing"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/canwire"
	"cand/hw/bcm2835"
	"cand/hw/pinout"
	"cand/internal/mono"
	"cand/internal/waitfor"
	"cand/mcp2515"
	"cand/metrics"
	"cand/sim/canbus"
	"cand/sim/mcpchip"
	"cand/sim/soc"
	"cand/socketcan"
)

// portRig is one Port on the virtual Pi with the real SPI engine and GPIO code, a
// socketpair standing in for the CAN socket, and a peer on the simulated bus. The
// bus is advanced by the test itself (no bus goroutine), so everything runs on the
// test goroutine.
type portRig struct {
	t      *testing.T
	bus    *canbus.Bus
	chip   *mcpchip.Chip
	peer   *canbus.Peer
	gpio   *bcm2835.GPIO
	port   *Port
	host   int // the test's end of the socketpair
	intPin int
}

func newPortRig(t *testing.T) *portRig { return newPortRigProbe(t, nil) }

// probePins are the logic-analyzer pins newPortRigProbe sets up when asked.
var probePins = [3]int{5, 6, 13} // interrupt, spi, socket write

func newPortRigProbe(t *testing.T, probe *Probe) *portRig {
	t.Helper()
	const intPin = 25
	r := &portRig{t: t, intPin: intPin}
	s := soc.New(400_000_000, bcm2835.SoCBCM2837)
	r.bus = canbus.New(500_000)
	r.chip = mcpchip.New(16_000_000, r.bus)
	peer, err := canbus.NewPeer(r.bus, canbus.PeerSpec{Kind: canbus.PeerAnswer, Name: "echo", IDOffset: 1})
	if err != nil {
		t.Fatal(err)
	}
	r.peer = peer
	if err := s.AttachSPI(r.chip, pinout.PinCE0, false); err != nil {
		t.Fatal(err)
	}
	if err := s.AttachInput(intPin, r.chip); err != nil {
		t.Fatal(err)
	}
	r.gpio = bcm2835.NewGPIO(s.GPIO(), bcm2835.SoCBCM2837)
	plan := bcm2835.PinPlan{ChipSelects: []bcm2835.ChipSelect{{Native: 0}}, Interrupts: []int{intPin}}
	if probe != nil {
		probe.GPIO = r.gpio
		plan.Outputs = probePins[:]
	}
	saved, err := bcm2835.SetupPins(r.gpio, plan)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { saved.Restore() })
	engine := bcm2835.NewSPI(s.SPI0(), r.gpio, bcm2835.SPIOptions{CoreClockHz: 400_000_000})
	dev, err := engine.Device(bcm2835.DeviceConfig{ClockHz: 10_000_000, CS: bcm2835.ChipSelect{Native: 0}})
	if err != nil {
		t.Fatal(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	r.host = fds[0]
	m := metrics.New("test").AddController("can0", "vcan0")
	var tr Transport = dev
	if probe != nil {
		tr = &probeCheck{dev: dev, r: r}
	}
	spi := NewSPI(tr, m, probe)
	bt, err := mcp2515.CalcBitTiming(16_000_000, 500_000, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	intr := r.gpio.ActiveLow(intPin)
	ctl := mcp2515.New(spi, intr, mcp2515.Config{CNF1: bt.CNF1, CNF2: bt.CNF2, CNF3: bt.CNF3, Bitrate: 500_000}, mono.Now)
	r.advance()
	if err := ctl.Init(); err != nil {
		t.Fatal(err)
	}
	r.port = NewPort(PortConfig{Name: "can0", Ctl: ctl, SPI: spi, Int: intr, IntFd: -1, SockFd: fds[1], Metrics: m, ErrorFrames: true})
	return r
}

// probeCheck wraps the SPI device and records the analyzer pins' levels while each
// transfer runs.
type probeCheck struct {
	dev       *bcm2835.Device
	r         *portRig
	spiHigh   int // transfers during which the SPI pin was high
	intHigh   int // ... and the interrupt pin
	transfers int
}

func (p *probeCheck) Transfer(tx, rx []byte, t *bcm2835.Timing) error {
	p.sample()
	return p.dev.Transfer(tx, rx, t)
}

func (p *probeCheck) TransferThen(tx, rx []byte, first int, more func([]byte) int, t *bcm2835.Timing) (int, error) {
	p.sample()
	return p.dev.TransferThen(tx, rx, first, more, t)
}

func (p *probeCheck) sample() {
	p.transfers++
	if p.r.gpio.Level(probePins[1]) {
		p.spiHigh++
	}
	if p.r.gpio.Level(probePins[0]) {
		p.intHigh++
	}
}

func (r *portRig) advance() {
	r.bus.Lock()
	r.bus.AdvanceTo(mono.Now())
	r.bus.Unlock()
}

// waitINT advances the bus in real time until INT is asserted.
func (r *portRig) waitINT() {
	waitfor.Cond(r.t, 5*time.Second, "INT asserted", func() bool {
		if !r.gpio.Level(r.intPin) {
			return true
		}
		r.advance()
		return false
	})
}

// bothFull has the peer send f0 and f1 and advances the bus in real time until
// both wait in the chip's RX buffers.
func (r *portRig) bothFull(f0, f1 can.Frame) {
	r.t.Helper()
	r.peer.Send(f0)
	r.peer.Send(f1)
	waitfor.Cond(r.t, 5*time.Second, "both RX buffers full", func() bool {
		if r.chip.RXHeld() >= 2 {
			return true
		}
		r.advance()
		return false
	})
}

// allocsPerFrame sends one frame from the peer, serves the chip's interrupt,
// runs then (if not nil) and reads the frame from the socket, 20 times; it
// fails unless the frame arrived exactly, and returns the allocations a frame.
func (r *portRig) allocsPerFrame(then func()) float64 {
	r.t.Helper()
	want := can.Frame{ID: 0x321, Length: 8, Data: can.Data{1, 2, 3, 4, 5, 6, 7, 8}}
	var b [socketcan.FrameSize]byte
	var got can.Frame
	allocs := testing.AllocsPerRun(20, func() {
		r.peer.Send(want)
		r.waitINT()
		if err := r.port.interrupt(mono.Now()); err != nil {
			r.t.Fatal(err)
		}
		if then != nil {
			then()
		}
		if _, err := unix.Read(r.host, b[:]); err != nil {
			r.t.Fatal(err)
		}
		got, _ = socketcan.Decode(&b)
	})
	if got != want {
		r.t.Fatalf("socket got %v, want %v", got, want)
	}
	return allocs
}

// RX: one interrupt with one frame — READ STATUS, READ RX BUFFER, socket write —
// allocates nothing; the frame arrives on the socket exactly.
func TestRXPathAllocatesNothing(t *testing.T) {
	if allocs := newPortRig(t).allocsPerFrame(nil); allocs != 0 {
		t.Fatalf("%v allocations per received frame", allocs)
	}
}

// RX with both buffers full: one interrupt reads both and writes them to the
// socket, allocating nothing; they arrive in bus order, each counted.
func TestRXPairPathAllocatesNothing(t *testing.T) {
	r := newPortRig(t)
	first := can.Frame{ID: 0x321, Length: 8, Data: can.Data{1, 2, 3, 4, 5, 6, 7, 8}}
	second := can.Frame{ID: 0x322, Length: 2, Data: can.Data{9, 10}}
	var b [socketcan.FrameSize]byte
	var got [2]can.Frame
	rx0 := r.port.M.RXFrames.Load()
	allocs := testing.AllocsPerRun(20, func() {
		r.bothFull(first, second)
		if err := r.port.interrupt(mono.Now()); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if _, err := unix.Read(r.host, b[:]); err != nil {
				t.Fatal(err)
			}
			got[i], _ = socketcan.Decode(&b)
		}
	})
	if got != [2]can.Frame{first, second} {
		t.Fatalf("socket got %v, want %v then %v", got, first, second)
	}
	if allocs != 0 {
		t.Fatalf("%v allocations per pair of received frames", allocs)
	}
	if n := r.port.M.RXFrames.Load() - rx0; n != 2*21 {
		t.Errorf("RXFrames grew by %d over 21 pairs, want %d", n, 2*21)
	}
	if n := r.port.M.BothRXFull.Count(); n != 21 {
		t.Errorf("both RX buffers seen full %d times, want 21", n)
	}
}

// A pair the socket cannot take: each frame is a socket write error, neither is
// counted received, and both count as bus load.
func TestRXPairSocketFull(t *testing.T) {
	r := newPortRig(t)
	var fill [socketcan.FrameSize]byte
	for i := 0; ; i++ {
		err := socketcan.WriteFrame(r.port.sockFd, &fill)
		if err == unix.EAGAIN {
			break
		}
		if err != nil || i > 1<<20 {
			t.Fatalf("filling the socket: %v after %d frames", err, i)
		}
	}
	first := can.Frame{ID: 0x321, Length: 8}
	second := can.Frame{ID: 0x322, Length: 2}
	r.bothFull(first, second)
	m := r.port.M
	rx0, errs0, bits0 := m.RXFrames.Load(), m.SocketWriteErrs.Load(), m.RXBits.Load()
	if err := r.port.interrupt(mono.Now()); err != nil {
		t.Fatal(err)
	}
	if n := m.SocketWriteErrs.Load() - errs0; n != 2 {
		t.Errorf("%d socket write errors, want 2", n)
	}
	if n := m.RXFrames.Load() - rx0; n != 0 {
		t.Errorf("%d frames counted received, want 0", n)
	}
	if n, want := m.RXBits.Load()-bits0, uint64(canwire.Bits(&first)+canwire.Bits(&second)); n != want {
		t.Errorf("RXBits grew by %d, want %d", n, want)
	}
}

// TX: a frame read from the socket and loaded into a TX buffer (LOAD TX BUFFER +
// RTS), then its TX-done interrupt, allocate nothing; the frame reaches the bus.
func TestTXPathAllocatesNothing(t *testing.T) {
	r := newPortRig(t)
	f := can.Frame{ID: 0x1ABCDE, IsExtended: true, Length: 3, Data: can.Data{9, 8, 7}}
	var b [socketcan.FrameSize]byte
	socketcan.Encode(&b, f)
	var ans [socketcan.FrameSize]byte
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := unix.Write(r.host, b[:]); err != nil {
			t.Fatal(err)
		}
		r.port.sockReadable = true
		if err := r.port.pumpTX(); err != nil {
			t.Fatal(err)
		}
		// TX-done, then the peer's answer: serviced until both are in.
		for {
			r.waitINT()
			if err := r.port.interrupt(mono.Now()); err != nil {
				t.Fatal(err)
			}
			if _, err := unix.Read(r.host, ans[:]); err == nil {
				break
			}
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per transmitted frame", allocs)
	}
	recv := r.peer.Received()
	if len(recv) == 0 || recv[len(recv)-1].Frame != f {
		t.Fatalf("bus did not carry %v (peer log %v)", f, recv)
	}
	got, _ := socketcan.Decode(&ans)
	if want := (can.Frame{ID: 0x1ABCDF, IsExtended: true, Length: 3, Data: can.Data{9, 8, 7}}); got != want {
		t.Fatalf("answer %v, want %v", got, want)
	}
}

// The logic-analyzer pins: the SPI pin is high during every transfer, the
// interrupt pin during every transfer of an interrupt, and all are low between.
func TestProbePins(t *testing.T) {
	probe := &Probe{Interrupt: probePins[0], SPI: probePins[1], SocketWrite: probePins[2]}
	r := newPortRigProbe(t, probe)
	pc := r.port.spi.dev.(*probeCheck)
	pc.transfers, pc.spiHigh, pc.intHigh = 0, 0, 0 // Init's transfers ran outside interrupts
	r.peer.Send(can.Frame{ID: 0x55, Length: 1, Data: can.Data{1}})
	r.waitINT()
	if err := r.port.interrupt(mono.Now()); err != nil {
		t.Fatal(err)
	}
	if pc.transfers != 2 || pc.spiHigh != 2 || pc.intHigh != 2 {
		t.Fatalf("%d transfers, SPI pin high in %d, interrupt pin high in %d; want 2, 2, 2", pc.transfers, pc.spiHigh, pc.intHigh)
	}
	for _, pin := range probePins {
		if r.gpio.Level(pin) {
			t.Fatalf("analyzer pin %d still high after the interrupt", pin)
		}
	}
	var b [socketcan.FrameSize]byte
	if _, err := unix.Read(r.host, b[:]); err != nil {
		t.Fatalf("frame not written: %v", err)
	}
}
