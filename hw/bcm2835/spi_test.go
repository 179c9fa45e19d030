package bcm2835_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"cand/hw/bcm2835"
	"cand/hw/pinout"
	"cand/internal/mono"
	"cand/sim/soc"
)

const core = 250_000_000

// echo is an SPI slave that answers each byte with its complement and counts.
type echo struct {
	active bool
	n      int
}

func (e *echo) SetCS(active bool, at int64) { e.active = active }
func (e *echo) Exchange(mosi byte, mode uint8, sclk uint32, at int64) byte {
	e.n++
	return ^mosi
}

// logRegs wraps a Regs and logs every access to it.
type logRegs struct {
	r   bcm2835.Regs[bcm2835.SPIReg]
	log []string
}

func (l *logRegs) Load(off bcm2835.SPIReg) uint32 {
	v := l.r.Load(off)
	l.log = append(l.log, fmt.Sprintf("L%02x", off))
	return v
}

func (l *logRegs) Store(off bcm2835.SPIReg, v uint32) {
	l.log = append(l.log, fmt.Sprintf("S%02x=%x", off, v))
	l.r.Store(off, v)
}

type rig struct {
	soc  *soc.SoC
	gpio *bcm2835.GPIO
	spi  *bcm2835.SPI
	sl   *echo
}

func newRig(t testing.TB, regs func(bcm2835.Regs[bcm2835.SPIReg]) bcm2835.Regs[bcm2835.SPIReg], opt bcm2835.SPIOptions) *rig {
	s := soc.New(core, bcm2835.SoCBCM2837)
	g := bcm2835.NewGPIO(s.GPIO(), bcm2835.SoCBCM2837)
	for _, p := range []int{pinout.PinCE0, pinout.PinCE1, pinout.PinMISO, pinout.PinMOSI, pinout.PinSCLK} {
		g.SetFunction(p, bcm2835.FselAlt0)
	}
	sl := &echo{}
	if err := s.AttachSPI(sl, pinout.PinCE0, false); err != nil {
		t.Fatal(err)
	}
	var r bcm2835.Regs[bcm2835.SPIReg] = s.SPI0()
	if regs != nil {
		r = regs(r)
	}
	opt.CoreClockHz = core
	return &rig{soc: s, gpio: g, spi: bcm2835.NewSPI(r, g, opt), sl: sl}
}

func (r *rig) device(t testing.TB, cfg bcm2835.DeviceConfig) *bcm2835.Device {
	d, err := r.spi.Device(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var ce0 = bcm2835.DeviceConfig{ClockHz: 10_000_000, Mode: 0, CS: bcm2835.ChipSelect{Native: 0}}

// The register sequence of a 2-byte transfer on CE0 in mode 3: set-up, TA, prefill,
// then only status and FIFO reads, then TA off with DONE written.
func TestTransferRegisterSequence(t *testing.T) {
	var lr *logRegs
	r := newRig(t, func(in bcm2835.Regs[bcm2835.SPIReg]) bcm2835.Regs[bcm2835.SPIReg] { lr = &logRegs{r: in}; return lr }, bcm2835.SPIOptions{})
	cfg := ce0
	cfg.Mode = 3
	d := r.device(t, cfg)
	if want := []string{"S00=3"}; !equal(lr.log, want) {
		t.Fatalf("Device wrote %v, want %v (TA off, CS none: every CE idles inactive)", lr.log, want)
	}
	lr.log = nil
	rx := make([]byte, 2)
	if err := d.Transfer([]byte{0xA0, 0x0F}, rx, nil); err != nil {
		t.Fatal(err)
	}
	if rx[0] != 0x5F || rx[1] != 0xF0 {
		t.Fatalf("rx = % x, want 5f f0", rx)
	}
	// The first transfer clears the FIFOs and sets CLK; every transfer ends with
	// DONE and CLEAR in one write, TA off.
	tail := []string{"S00=1003c"}
	checkLog(t, lr.log, []string{"S00=3c", "S08=1a", "S00=8c", "S04=a0", "S04=f"}, tail)
	// A second one finds the FIFOs cleared and CLK set: TA is its first write.
	lr.log = nil
	if err := d.Transfer([]byte{0x12, 0x34}, rx, nil); err != nil {
		t.Fatal(err)
	}
	if rx[0] != 0xED || rx[1] != 0xCB {
		t.Fatalf("rx = % x, want ed cb", rx)
	}
	checkLog(t, lr.log, []string{"S00=8c", "S04=12", "S04=34"}, tail)
	// A device at another SCLK writes CLK again; the first one then does too.
	slow := cfg
	slow.ClockHz = 1_000_000
	ds := r.device(t, slow)
	lr.log = nil
	for _, dv := range []*bcm2835.Device{ds, d} {
		if err := dv.Transfer([]byte{0x12, 0x34}, rx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := clkStores(lr.log), []string{"S08=fa", "S08=1a"}; !equal(got, want) {
		t.Fatalf("CLK writes %v, want %v", got, want)
	}
	if st := r.soc.SPI0().Stats(); st.DoneWrites != 4 || st.Underflows != 0 || st.LostWrites != 0 {
		t.Fatalf("model stats %+v", st)
	}
}

// checkLog fails unless log starts with head, ends with tail and has only status
// reads and two FIFO reads between.
func checkLog(t *testing.T, log, head, tail []string) {
	t.Helper()
	if len(log) < len(head)+len(tail) || !equal(log[:len(head)], head) || !equal(log[len(log)-len(tail):], tail) {
		t.Fatalf("register log %v: want it to start %v and end %v", log, head, tail)
	}
	fifoReads := 0
	for _, a := range log[len(head) : len(log)-len(tail)] {
		switch a {
		case "L00":
		case "L04":
			fifoReads++
		default:
			t.Fatalf("unexpected access %s while waiting, log %v", a, log)
		}
	}
	if fifoReads != 2 {
		t.Fatalf("%d FIFO reads, want 2: %v", fifoReads, log)
	}
}

func clkStores(log []string) []string {
	var out []string
	for _, a := range log {
		if strings.HasPrefix(a, "S08=") {
			out = append(out, a)
		}
	}
	return out
}

// slowRegs is a CPU slower than the wire: every access takes at least perNs of
// the model's (host) time.
type slowRegs struct {
	logRegs
	perNs int64
}

func (s *slowRegs) Load(off bcm2835.SPIReg) uint32 {
	v := s.logRegs.Load(off)
	s.spin()
	return v
}

func (s *slowRegs) Store(off bcm2835.SPIReg, v uint32) {
	s.logRegs.Store(off, v)
	s.spin()
}

func (s *slowRegs) spin() {
	for t0 := mono.Now(); mono.Now()-t0 < s.perNs; {
	}
}

// A CPU that falls behind the wire finds DONE at its first status read once the
// TX FIFO is written: it reads every byte with no status read between and does
// not read CS again before ending the transfer.
func TestTransferBehindTheWireReadsAfterDone(t *testing.T) {
	var sr *slowRegs
	r := newRig(t, func(in bcm2835.Regs[bcm2835.SPIReg]) bcm2835.Regs[bcm2835.SPIReg] {
		sr = &slowRegs{logRegs: logRegs{r: in}, perNs: 5_000} // 5 µs an access, a byte is < 1 µs
		return sr
	}, bcm2835.SPIOptions{})
	d := r.device(t, ce0)
	tx := []byte{0x03, 0x61, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	rx := make([]byte, len(tx))
	for i := range 2 {
		sr.log = nil
		if err := d.Transfer(tx, rx, nil); err != nil {
			t.Fatal(err)
		}
		for j, b := range rx {
			if b != ^tx[j] {
				t.Fatalf("transfer %d: rx = % x, want the complement of % x", i, rx, tx)
			}
		}
		want := []string{"S00=80"}
		if i == 0 {
			want = []string{"S00=30", "S08=1a", "S00=80"}
		}
		for _, b := range tx {
			want = append(want, fmt.Sprintf("S04=%x", b))
		}
		want = append(want, "L00")
		for range tx {
			want = append(want, "L04")
		}
		want = append(want, "S00=10030")
		if !equal(sr.log, want) {
			t.Fatalf("transfer %d: register log\n%v\nwant\n%v", i, sr.log, want)
		}
	}
	if st := r.soc.SPI0().Stats(); st.Underflows != 0 || st.LostWrites != 0 {
		t.Fatalf("model stats %+v", st)
	}
}

func equal(a, b []string) bool { return strings.Join(a, " ") == strings.Join(b, " ") }

func TestTransferTiming(t *testing.T) {
	slept := 0
	// time.Sleep's wake-up (the runtime's timers) can take a millisecond; a stated
	// wake-up latency keeps the sleep decision below independent of it.
	r := newRig(t, nil, bcm2835.SPIOptions{Sleep: func(d time.Duration) { slept++; time.Sleep(d) }, WakeLatency: 100 * time.Microsecond})
	d := r.device(t, ce0)
	if d.SCLKHz() != 9_615_384 || d.CDIV() != 26 || d.ByteNs() != 936 {
		t.Fatalf("SCLK %d CDIV %d byte %d ns, want 9615384, 26, 936", d.SCLKHz(), d.CDIV(), d.ByteNs())
	}
	for _, n := range []int{2, 14, 200} {
		tx, rx := make([]byte, n), make([]byte, n)
		var tm bcm2835.Timing
		before := mono.Now()
		if err := d.Transfer(tx, rx, &tm); err != nil {
			t.Fatal(err)
		}
		after := mono.Now()
		if tm.WireNs != int64(n)*936 {
			t.Errorf("%d bytes: WireNs %d, want %d", n, tm.WireNs, n*936)
		}
		if !(before <= tm.CSDown && tm.CSDown < tm.FirstByte && tm.FirstByte <= tm.LastByte && tm.LastByte <= tm.CSUp && tm.CSUp <= after) {
			t.Errorf("%d bytes: stamps out of order: %+v", n, tm)
		}
		if tm.CSUp-tm.CSDown < tm.WireNs || tm.FirstByte-tm.CSDown < 936 {
			t.Errorf("%d bytes: faster than the wire: %+v", n, tm)
		}
		if n < 20 && tm.Slept { // wire time under the budget: never sleeps
			t.Errorf("%d bytes (%d ns of wire, budget 20 µs) slept", n, tm.WireNs)
		}
		for i := range rx {
			if rx[i] != 0xFF {
				t.Fatalf("%d bytes: rx[%d] = %#x", n, i, rx[i])
			}
		}
	}
	// At 20 kHz the 64 bytes in flight take 25.6 ms, far beyond the budget however
	// slowly this machine runs the driver (at 1 MHz, 576 µs, qemu-user once ran the
	// driver slower than the bytes): it sleeps.
	slow := r.device(t, bcm2835.DeviceConfig{ClockHz: 20_000, CS: bcm2835.ChipSelect{Native: 0}})
	slept = 0
	var tm bcm2835.Timing
	if err := slow.Transfer(make([]byte, 200), nil, &tm); err != nil {
		t.Fatal(err)
	}
	if !tm.Slept || slept == 0 {
		t.Errorf("200 bytes at 20 kHz: Slept %v, %d Sleep calls", tm.Slept, slept)
	}
}

func TestTransferDoesNotAllocate(t *testing.T) {
	r := newRig(t, nil, bcm2835.SPIOptions{})
	d := r.device(t, ce0)
	dg := r.device(t, bcm2835.DeviceConfig{ClockHz: 10_000_000, CS: bcm2835.ChipSelect{Native: -1, GPIO: 22}})
	for _, n := range []int{2, 14} {
		tx, rx := make([]byte, n), make([]byte, n)
		var tm bcm2835.Timing
		for _, dev := range []*bcm2835.Device{d, dg} {
			if a := testing.AllocsPerRun(50, func() {
				if err := dev.Transfer(tx, rx, &tm); err != nil {
					panic(err)
				}
			}); a != 0 {
				t.Errorf("%d-byte transfer: %v allocations", n, a)
			}
		}
		if a := testing.AllocsPerRun(50, func() { d.Transfer(tx, nil, nil) }); a != 0 {
			t.Errorf("%d-byte write-only transfer without timing: %v allocations", n, a)
		}
	}
}

// deadSPI0 is a controller that never clocks: TA is stored, nothing ever arrives.
type deadSPI0 struct{ cs bcm2835.CS }

func (d *deadSPI0) Load(off bcm2835.SPIReg) uint32 {
	if off == bcm2835.SPICS {
		return uint32(d.cs | bcm2835.CSTXD)
	}
	return 0
}
func (d *deadSPI0) Store(off bcm2835.SPIReg, v uint32) {
	if off == bcm2835.SPICS {
		d.cs = bcm2835.CS(v)
	}
}

func TestTransferDeadController(t *testing.T) {
	s := soc.New(core, bcm2835.SoCBCM2837)
	g := bcm2835.NewGPIO(s.GPIO(), bcm2835.SoCBCM2837)
	dead := &deadSPI0{}
	spi := bcm2835.NewSPI(dead, g, bcm2835.SPIOptions{CoreClockHz: core})
	d, err := spi.Device(bcm2835.DeviceConfig{ClockHz: 10_000_000, CS: bcm2835.ChipSelect{Native: -1, GPIO: 22}})
	if err != nil {
		t.Fatal(err)
	}
	var tm bcm2835.Timing
	err = d.Transfer([]byte{1, 2, 3}, make([]byte, 3), &tm)
	if err == nil || !strings.Contains(err.Error(), "SPI0 stopped after 0 of 3 bytes") || !strings.Contains(err.Error(), "spi-bcm2835") {
		t.Fatalf("err = %v", err)
	}
	if dead.cs&bcm2835.CSTA != 0 || dead.cs&bcm2835.CSDONE == 0 {
		t.Errorf("after the failure CS = %#x: want TA off and DONE written", dead.cs)
	}
	if !g.Level(22) {
		t.Error("GPIO chip select left active after the failure")
	}
}

func TestDeviceValidation(t *testing.T) {
	r := newRig(t, nil, bcm2835.SPIOptions{})
	for _, c := range []struct {
		cfg  bcm2835.DeviceConfig
		want string
	}{
		{bcm2835.DeviceConfig{ClockHz: 1e6, Mode: 4}, "SPI mode 4"},
		{bcm2835.DeviceConfig{}, "0 Hz"},
		{bcm2835.DeviceConfig{ClockHz: 1e6, CS: bcm2835.ChipSelect{Native: 2}}, "chip select 2"},
		{bcm2835.DeviceConfig{ClockHz: 1e6, CS: bcm2835.ChipSelect{Native: -1, GPIO: 54}}, "GPIO54 does not exist"},
	} {
		if _, err := r.spi.Device(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Device(%+v) err = %v, want it to say %q", c.cfg, err, c.want)
		}
	}
	if _, err := bcm2835.NewSPI(r.soc.SPI0(), nil, bcm2835.SPIOptions{}).Device(ce0); err == nil || !strings.Contains(err.Error(), "CoreClockHz") {
		t.Errorf("no core clock: err = %v", err)
	}
	d := r.device(t, ce0)
	if err := d.Transfer(make([]byte, 3), make([]byte, 2), nil); err == nil || !strings.Contains(err.Error(), "len(rx) == len(tx)") {
		t.Errorf("rx length mismatch: err = %v", err)
	}
	if err := d.Transfer(nil, nil, nil); err != nil || r.sl.n != 0 {
		t.Errorf("empty transfer: err %v, %d bytes shifted", err, r.sl.n)
	}
}

// A Pi 3 whose core clock idles at 250 MHz while the divider was sized for 400:
// SCLK drops, the transfer takes longer, and it still completes.
func TestTransferSlowerCoreClock(t *testing.T) {
	s := soc.New(400_000_000, bcm2835.SoCBCM2837)
	g := bcm2835.NewGPIO(s.GPIO(), bcm2835.SoCBCM2837)
	g.SetFunction(pinout.PinCE0, bcm2835.FselAlt0)
	sl := &echo{}
	s.AttachSPI(sl, pinout.PinCE0, false)
	spi := bcm2835.NewSPI(s.SPI0(), g, bcm2835.SPIOptions{CoreClockHz: 400_000_000, MinCoreClockHz: 250_000_000})
	d, err := spi.Device(ce0)
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi := d.SCLKRange(); lo != 6_250_000 || hi != 10_000_000 {
		t.Fatalf("SCLK range %d..%d, want 6250000..10000000", lo, hi)
	}
	s.SetCoreClockHz(250_000_000)
	var tm bcm2835.Timing
	if err := d.Transfer(make([]byte, 10), make([]byte, 10), &tm); err != nil {
		t.Fatal(err)
	}
	if slow := bcm2835.WireNs(250_000_000, 40, 10); tm.CSUp-tm.CSDown < slow {
		t.Fatalf("10 bytes at 6.25 MHz took %d ns, less than their wire time %d", tm.CSUp-tm.CSDown, slow)
	}
}

// A long wait sleeps only for the part beyond the wake-up latency, and a wait
// shorter than the wake-up is polled through however far beyond the budget it is.
// The bytes, their order and the timing stay those of a polled transfer.
func TestTransferSleepsOnlyWhatPays(t *testing.T) {
	const wake = 100 * time.Microsecond
	var asked []time.Duration
	r := newRig(t, nil, bcm2835.SPIOptions{Sleep: func(d time.Duration) { asked = append(asked, d) }, WakeLatency: wake})
	if r.spi.WakeLatency() != wake {
		t.Fatalf("WakeLatency %v, want the %v given", r.spi.WakeLatency(), wake)
	}
	slow := r.device(t, bcm2835.DeviceConfig{ClockHz: 1_000_000, CS: bcm2835.ChipSelect{Native: 0}})
	tx, rx := make([]byte, 200), make([]byte, 200)
	for i := range tx {
		tx[i] = byte(i)
	}
	var tm bcm2835.Timing
	if err := slow.Transfer(tx, rx, &tm); err != nil {
		t.Fatal(err)
	}
	for i := range rx {
		if rx[i] != ^tx[i] {
			t.Fatalf("rx[%d] = %#x, want %#x", i, rx[i], ^tx[i])
		}
	}
	// 64 bytes in flight at 1 MHz: 64 × 9 µs = 576 µs of wait at most, of which
	// the last 100 µs are polled.
	limit := time.Duration(64*slow.ByteNs()) - wake
	if len(asked) == 0 || !tm.Slept || tm.SleptNs <= 0 {
		t.Fatalf("200 bytes at 1 MHz: %d sleeps, Slept %v, SleptNs %d: want it to sleep", len(asked), tm.Slept, tm.SleptNs)
	}
	for _, d := range asked {
		if d <= 0 || d > limit {
			t.Errorf("slept %v: want 0 < sleep ≤ %v (wait − wake-up)", d, limit)
		}
	}
	// At 9.6 MHz 64 bytes take 59.9 µs, beyond the 20 µs budget but below the
	// wake-up: polled.
	asked = nil
	fast := r.device(t, ce0)
	if err := fast.Transfer(make([]byte, 64), make([]byte, 64), &tm); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 0 || tm.Slept || tm.SleptNs != 0 {
		t.Errorf("64 bytes at 9.6 MHz with a 100 µs wake-up: slept %v (Slept %v, %d ns): want it polled", asked, tm.Slept, tm.SleptNs)
	}
}

// pollSPI0 is a controller whose bytes advance with the status polls, not with
// time: every third CS read completes one byte. On the CS read numbered stallAt it
// blocks the calling thread for away first: the thread is descheduled while the
// controller, like the virtual Pi's whose time stops with the CPU thread's stalls,
// gets nowhere.
type pollSPI0 struct {
	cs           bcm2835.CS
	tx, rx       []byte
	polls        int
	stallAt      int
	away         time.Duration
	sawLongPause bool
}

func (p *pollSPI0) Load(off bcm2835.SPIReg) uint32 {
	switch off {
	case bcm2835.SPICS:
		p.polls++
		if p.polls == p.stallAt {
			time.Sleep(p.away)
			p.sawLongPause = true
		}
		if p.polls%3 == 0 && len(p.tx) > 0 && p.cs&bcm2835.CSTA != 0 {
			p.rx = append(p.rx, ^p.tx[0])
			p.tx = p.tx[1:]
		}
		v := p.cs
		if len(p.tx) < 64 {
			v |= bcm2835.CSTXD
		}
		if len(p.rx) > 0 {
			v |= bcm2835.CSRXD
		}
		if p.cs&bcm2835.CSTA != 0 && len(p.tx) == 0 {
			v |= bcm2835.CSDONE
		}
		return uint32(v)
	case bcm2835.SPIFIFO:
		if len(p.rx) == 0 {
			return 0
		}
		b := p.rx[0]
		p.rx = p.rx[1:]
		return uint32(b)
	}
	return 0
}

func (p *pollSPI0) Store(off bcm2835.SPIReg, v uint32) {
	switch off {
	case bcm2835.SPICS:
		v := bcm2835.CS(v)
		if v&bcm2835.CSCLEARTX != 0 {
			p.tx = p.tx[:0]
		}
		if v&bcm2835.CSCLEARRX != 0 {
			p.rx = p.rx[:0]
		}
		p.cs = v &^ (bcm2835.CSCLEARRX | bcm2835.CSCLEARTX | bcm2835.CSDONE)
	case bcm2835.SPIFIFO:
		if p.cs&bcm2835.CSTA != 0 {
			p.tx = append(p.tx, byte(v))
		}
	}
}

// A thread descheduled for longer than the stall limit in the middle of a transfer
// has not watched the controller meanwhile: once it runs again and the bytes come,
// the transfer completes; it is not reported as a stopped controller.
func TestTransferDescheduledIsNoStall(t *testing.T) {
	s := soc.New(core, bcm2835.SoCBCM2837)
	g := bcm2835.NewGPIO(s.GPIO(), bcm2835.SoCBCM2837)
	ctl := &pollSPI0{stallAt: 4, away: 30 * time.Millisecond} // the look again after it (poll 5) finds nothing either
	spi := bcm2835.NewSPI(ctl, g, bcm2835.SPIOptions{CoreClockHz: core, WakeLatency: time.Millisecond})
	d, err := spi.Device(bcm2835.DeviceConfig{ClockHz: 10_000_000, CS: bcm2835.ChipSelect{Native: -1, GPIO: 22}})
	if err != nil {
		t.Fatal(err)
	}
	tx, rx := []byte{1, 2, 3, 4, 5, 6}, make([]byte, 6)
	if err := d.Transfer(tx, rx, nil); err != nil {
		t.Fatalf("descheduled for %v mid-transfer: %v", ctl.away, err)
	}
	if !ctl.sawLongPause {
		t.Fatal("the transfer ended before the pause: the test did not test it")
	}
	for i := range rx {
		if rx[i] != ^tx[i] {
			t.Fatalf("rx = % x, want the complement of % x", rx, tx)
		}
	}
}
