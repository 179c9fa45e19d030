package mcp2515_test

import (
	"math"
	"testing"

	"go.einride.tech/can"

	"cand/canstate"
	"cand/mcp2515"
)

// pausedSPI is the rig's SPI with the error pass's transfers paused, CS held: the
// owner thread interrupted while it fills the SPI FIFO (on a BCM2835 in polled
// mode the transfer then stops until the thread is back, and the chip answers
// the later registers later). The first READ of TEC..EFLG that reads TEC ≥ at
// pauses for pause ns after the counters; the next READ of TEC and REC alone
// after it pauses for again ns before them. It counts the short READs.
type pausedSPI struct {
	r            *rig
	at           byte
	pause, again int64
	paused       bool
	counters     int // READs of TEC and REC alone
	flags        int // READs of EFLG alone
}

func (s *pausedSPI) Transfer(op mcp2515.Op, tx, rx []byte) error {
	if op != mcp2515.OpRead {
		return s.r.Transfer(op, tx, rx)
	}
	at, pause := -1, int64(0)
	switch {
	case mcp2515.Addr(tx[1]) == mcp2515.RegTEC && len(tx) == 2+mcp2515.ErrorRegsLen:
		if s.at != 0 && !s.paused {
			at, pause = 4, s.pause // after TEC and REC
		}
	case mcp2515.Addr(tx[1]) == mcp2515.RegTEC && len(tx) == 4:
		s.counters++
		if s.paused {
			at, pause, s.again = 2, s.again, 0 // before TEC
		}
	case mcp2515.Addr(tx[1]) == mcp2515.RegEFLG && len(tx) == 3:
		s.flags++
	}
	if at < 0 || pause == 0 {
		return s.r.Transfer(op, tx, rx)
	}
	r := s.r
	r.chip.SetCS(true, r.now)
	for i := range tx {
		if i == at && (at != 4 || rx[2] >= s.at) {
			r.now += pause
			s.paused = true
		}
		r.now += r.byteNs
		rx[i] = r.chip.Exchange(tx[i], 0, 10_000_000, r.now)
	}
	r.chip.SetCS(false, r.now)
	r.now += 50
	return nil
}

// errorPassRun transmits a frame nobody ACKs and services the chip's interrupts
// (each failed transmission sets MERRF; TEC 96 sets EFLG.TXWAR and ERRIF) through
// s until an error event leaves error-active. It returns that event.
func errorPassRun(t *testing.T, s *pausedSPI) mcp2515.ErrorEvent {
	t.Helper()
	r := newRigOn(t, 1_000_000, func(r *rig) mcp2515.SPI { s.r = r; return s })
	r.anyErr = true
	r.bus.NoAck(r.now, math.MaxInt64)
	if _, err := r.ctl.Transmit(&can.Frame{ID: 0x123, Length: 1, Data: can.Data{1}}); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		r.waitINT()
		if _, err := r.ctl.HandleInterrupt(r); err != nil {
			t.Fatal(err)
		}
		for _, e := range r.errs {
			if e.State != canstate.ErrorActive {
				return e
			}
			if e.TEC >= 96 || e.TXWarning || e.TXPassive {
				t.Fatalf("error-active event with TEC %d, TX warning %v, TX passive %v", e.TEC, e.TXWarning, e.TXPassive)
			}
		}
	}
	t.Fatalf("no error-warning or error-passive event after 100 interrupts: %+v", r.errs)
	return mcp2515.ErrorEvent{}
}

// wantPassive checks an error-passive event with the counters of one.
func wantPassive(t *testing.T, e mcp2515.ErrorEvent) {
	t.Helper()
	if e.State != canstate.ErrorPassive || !e.TXPassive || e.TEC < 128 || e.REC != 0 {
		t.Fatalf("error event: state %v, TX passive %v, TEC %d, REC %d; want error-passive with TEC ≥ 128, REC 0", e.State, e.TXPassive, e.TEC, e.REC)
	}
}

// An error event's counters are never older than its state: the error pass's
// READ of TEC..EFLG paused after the counters (TEC 96) long enough for the
// failing retransmissions to take the chip to error-passive reads EFLG passive;
// the driver reads TEC and REC again, after EFLG.
func TestErrorPassCountersFollowTheState(t *testing.T) {
	s := &pausedSPI{at: 96, pause: 2_000_000} // 2 ms: ~30 failed transmissions at 1 Mbit/s
	wantPassive(t, errorPassRun(t, s))
	if !s.paused || s.counters != 1 || s.flags != 0 {
		t.Fatalf("paused %v, %d READs of the counters and %d of EFLG after the error pass's; want paused, 1 and 0", s.paused, s.counters, s.flags)
	}
}

// Nor is its state older than its counters: paused at TEC 88 for about two
// failed transmissions, the READ reads EFLG warning; the counters read again after
// a further 2 ms pause are passive's, and the driver reads EFLG again (passive).
func TestErrorPassStateFollowsTheCounters(t *testing.T) {
	s := &pausedSPI{at: 88, pause: 150_000, again: 2_000_000}
	wantPassive(t, errorPassRun(t, s))
	if !s.paused || s.counters != 1 || s.flags != 1 {
		t.Fatalf("paused %v, %d READs of the counters and %d of EFLG after the error pass's; want paused, 1 and 1", s.paused, s.counters, s.flags)
	}
}

// Counters that agree with EFLG cost no further READ.
func TestErrorPassConsistentCountersReadOnce(t *testing.T) {
	s := &pausedSPI{}
	if e := errorPassRun(t, s); e.State != canstate.ErrorWarning || !e.TXWarning || e.TEC < 96 || e.TEC > 127 || e.REC != 0 {
		t.Fatalf("error event: state %v, TX warning %v, TEC %d, REC %d; want error-warning with TEC 96..127, REC 0", e.State, e.TXWarning, e.TEC, e.REC)
	}
	if s.counters != 0 || s.flags != 0 {
		t.Fatalf("%d READs of the counters and %d of EFLG after a consistent error pass, want none", s.counters, s.flags)
	}
}
