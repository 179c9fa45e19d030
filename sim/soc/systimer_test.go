package soc_test

import (
	"testing"
	"time"

	"cand/hw/bcm2835"
	"cand/internal/waitfor"
	"cand/sim/soc"
)

// CLO/CHI count the board's time in µs, through the same reader as on a real Pi.
func TestSystemTimerCountsBoardMicroseconds(t *testing.T) {
	s := soc.New(core, bcm2835.SoCBCM2835)
	st := bcm2835.NewSystemTimer(s.SystemTimer())
	clk := s.Clock()
	for range 100 {
		before := clk.Now()
		c := st.Count()
		after := clk.Now()
		if c < uint64(before/1000) || c > uint64(after/1000) {
			t.Fatalf("count %d outside the board's time %d..%d µs", c, before/1000, after/1000)
		}
	}
	// Read-only: a write to CLO or CHI changes nothing.
	m := s.SystemTimer()
	m.Store(bcm2835.STCHI, 0xFFFF)
	m.Store(bcm2835.STCLO, 0)
	if c := st.Count(); c < uint64(clk.Now()/1000)-1000 {
		t.Fatalf("a write moved the counter to %d", c)
	}
}

// The reader sees the counter go on across CLO's wrap on the model: never back,
// never a jump of 2^32.
func TestSystemTimerWrapOnModel(t *testing.T) {
	s := soc.New(core, bcm2835.SoCBCM2711)
	st := bcm2835.NewSystemTimer(s.SystemTimer())
	const wrap = uint64(7) << 32
	const before = 2000 // µs
	// Set again until a read finds the counter still short of the wrap: a
	// slow host (qemu-user under load) may let the board's time run past it
	// between the two.
	var prev uint64
	for try := 0; ; try++ {
		if try == 100 {
			t.Fatalf("the counter passed the wrap %d µs after SetCount, 100 times", before)
		}
		s.SystemTimer().SetCount(wrap - before)
		if prev = st.Count(); prev < wrap {
			break
		}
	}
	if prev < wrap-before {
		t.Fatalf("count after SetCount = %#x, want at least %#x", prev, wrap-before)
	}
	if !waitfor.Until(10*time.Second, func() bool {
		c := st.Count()
		if c < prev || c-prev > 1_000_000 {
			t.Fatalf("count went from %#x to %#x", prev, c)
		}
		prev = c
		return prev >= wrap+300
	}) {
		t.Fatalf("the counter did not pass the wrap in 10 s: at %#x", prev)
	}
	if hi := s.SystemTimer().Load(bcm2835.STCHI); hi != 7 {
		t.Fatalf("CHI after the wrap = %d, want 7", hi)
	}
}

// CS.Mn is set once the counter reaches Cn; writing 1 clears it. As on a Pi, a
// compare value the counter passed before it was written matches only after the
// wrap, so the value is written again until a read after the write shows the
// counter still short of it (a slow host may let the board's time pass it).
func TestSystemTimerCompare(t *testing.T) {
	s := soc.New(core, bcm2835.SoCBCM2837)
	m := s.SystemTimer()
	const ahead = 1000 // µs
	var lo, c1 uint32
	for try := 0; ; try++ {
		if try == 100 {
			t.Fatalf("the counter passed C1 = CLO + %d µs before a read after its write, 100 times", ahead)
		}
		m.Store(bcm2835.STCS, bcm2835.STCSM1) // an earlier try's C1, passed, may have matched
		lo = m.Load(bcm2835.STCLO)
		c1 = lo + ahead
		m.Store(bcm2835.STC1, c1)
		if m.Load(bcm2835.STCLO)-lo < ahead {
			break
		}
	}
	m.Store(bcm2835.STC3, lo-10) // passed already: matches only after the wrap
	if got := m.Load(bcm2835.STC1); got != c1 {
		t.Fatalf("C1 = %d, want %d", got, c1)
	}
	waitfor.Cond(t, 10*time.Second, "M1 set after C1", func() bool { return m.Load(bcm2835.STCS)&bcm2835.STCSM1 != 0 })
	if now := m.Load(bcm2835.STCLO); now-lo < ahead {
		t.Fatalf("M1 set at CLO %d, before C1 %d", now, c1)
	}
	if cs := m.Load(bcm2835.STCS); cs != bcm2835.STCSM1 {
		t.Fatalf("CS = %#x, want M1 only", cs)
	}
	m.Store(bcm2835.STCS, bcm2835.STCSM1|bcm2835.STCSM0)
	if cs := m.Load(bcm2835.STCS); cs != 0 {
		t.Fatalf("CS after writing 1 to M1 = %#x", cs)
	}
}

// Sample ties the counter to the board's time at the start of a tick, at a time
// no later register read precedes, and no earlier one follows (the board's time
// runs on between the two: the count may have ticked on since the access).
func TestSystemTimerSample(t *testing.T) {
	s := soc.New(core, bcm2835.SoCBCM2835)
	m := s.SystemTimer()
	m.SetCount(1 << 40)
	c := bcm2835.NewSystemTimer(m).Count() // an access: the board's time is reached
	tick, count := m.Sample()
	if tick%1000 != 0 || count < c || count > c+1_000_000 {
		t.Fatalf("Sample = (%d, %d), want a tick's start and a count from %d, the last access's, on", tick, count, c)
	}
	if later := bcm2835.NewSystemTimer(m).Count(); later < count {
		t.Fatalf("a read after the sample gave %d, before its %d", later, count)
	}
}

// BenchmarkSystemTimerCount is a System Timer read (CHI, CLO, CHI) on the
// virtual Pi's register model, on host time.
func BenchmarkSystemTimerCount(b *testing.B) {
	st := bcm2835.NewSystemTimer(soc.New(core, bcm2835.SoCBCM2835).SystemTimer())
	for b.Loop() {
		_ = st.Count()
	}
}
