package clock

import "testing"

// The per-gap trace is off by default; on, it keeps the last n looked-at gaps
// with the rule's split of each, oldest first.
func TestGapTraceRecordsTheSplit(t *testing.T) {
	c, s := strictOn(t, 2*FactorUnit, CPU{})
	s.busy(30 * us)
	c.Access()
	c.Leave()
	if tr := c.GapTrace(); tr != nil {
		t.Fatalf("trace off by default, got %v", tr)
	}
	c.TraceGaps(2)
	var virt [3]int64
	for i := range 3 {
		s.busy(int64(30+i) * us) // running
		s.now += 50 * us         // then stolen: neither running nor runnable nor asleep
		virt[i] = c.Access()
		c.Leave()
	}
	tr := c.GapTrace()
	if len(tr) != 2 {
		t.Fatalf("%d records, want the last 2:\n%s", len(tr), c.DumpGapTrace())
	}
	for i, r := range tr {
		on := int64(31+i) * us
		want := GapRecord{At: r.At, Virt: virt[i+1], Gap: on + 50*us, On: on, Rest: 50 * us, Kind: 's', Board: 2 * on, Removed: 50*us - on}
		if r != want {
			t.Errorf("record %d = %+v, want %+v", i, r, want)
		}
	}
}

// An access longer than LookGap is recorded with what was taken out of it and
// the account its rebase drops.
func TestGapTraceRecordsALongAccess(t *testing.T) {
	c, s := strictOn(t, 2*FactorUnit, CPU{AccessNs: 100})
	c.TraceGaps(4)
	s.busy(5 * us) // a short gap
	c.Access()
	s.now += 30 * us // the model's host time
	c.Leave()
	tr := c.GapTrace()
	if len(tr) != 1 {
		t.Fatalf("%d records, want the long access:\n%s", len(tr), c.DumpGapTrace())
	}
	want := GapRecord{At: s.now, Virt: c.Now(), Gap: 30 * us, Short: 5 * us, Kind: 'a', Removed: 30*us - 100}
	if tr[0] != want {
		t.Errorf("record %+v, want %+v", tr[0], want)
	}
}
