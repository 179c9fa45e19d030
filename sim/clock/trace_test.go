package clock

import "testing"

// gaps is a GapTracer that keeps every gap.
type gaps []GapRecord

func (g *gaps) Gap(r GapRecord) { *g = append(*g, r) }

// The per-gap trace is off by default; on, it hands the tracer every looked-at
// gap with the rule's split of it.
func TestGapTraceRecordsTheSplit(t *testing.T) {
	c, s := strictOn(t, 2*FactorUnit, CPU{})
	s.busy(30 * us)
	c.Access()
	c.Leave()
	if c.trace.Load() != nil {
		t.Fatal("trace on by default")
	}
	var tr gaps
	c.TraceGaps(&tr)
	var virt [3]int64
	for i := range 3 {
		s.busy(int64(30+i) * us) // running
		s.now += 50 * us         // then stolen: neither running nor runnable nor asleep
		virt[i] = c.Access()
		c.Leave()
	}
	if len(tr) != 3 {
		t.Fatalf("%d records, want 3: %+v", len(tr), tr)
	}
	for i, r := range tr {
		on := int64(30+i) * us
		want := GapRecord{At: r.At, Virt: virt[i], Gap: on + 50*us, On: on, Rest: 50 * us, Kind: 's', Board: 2 * on, Removed: 50*us - on}
		if r != want {
			t.Errorf("record %d = %+v, want %+v", i, r, want)
		}
	}
}

// An access longer than LookGap is recorded with what was taken out of it and
// the account its rebase drops.
func TestGapTraceRecordsALongAccess(t *testing.T) {
	c, s := strictOn(t, 2*FactorUnit, CPU{AccessNs: 100})
	var tr gaps
	c.TraceGaps(&tr)
	s.busy(5 * us) // a short gap
	c.Access()
	s.now += 30 * us // the model's host time
	c.Leave()
	if len(tr) != 1 {
		t.Fatalf("%d records, want the long access: %+v", len(tr), tr)
	}
	want := GapRecord{At: s.now, Virt: c.Now(), Gap: 30 * us, Short: 5 * us, Kind: 'a', Removed: 30*us - 100}
	if tr[0] != want {
		t.Errorf("record %+v, want %+v", tr[0], want)
	}
}
