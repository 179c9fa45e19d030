package mcp2515_test

import (
	"math"
	"testing"

	"go.einride.tech/can"

	"cand/canstate"
	"cand/mcp2515"
)

// pausedSPI is the rig's SPI with the first error pass's READ of TEC..EFLG that
// reads TEC ≥ 96 paused for pause ns after TEC and REC are shifted out, CS held:
// the owner thread interrupted while it fills the SPI FIFO (on a BCM2835 in
// polled mode the transfer then stops until the thread is back, and the chip
// answers the later registers later). It counts the short READs of TEC and REC.
type pausedSPI struct {
	r       *rig
	pause   int64
	paused  bool
	rereads int
}

func (s *pausedSPI) Transfer(op mcp2515.Op, tx, rx []byte) error {
	long := op == mcp2515.OpRead && tx[1] == mcp2515.RegTEC && len(tx) == 2+mcp2515.RegEFLG-mcp2515.RegTEC+1
	if op == mcp2515.OpRead && tx[1] == mcp2515.RegTEC && len(tx) == 4 {
		s.rereads++
	}
	if !long || s.pause == 0 || s.paused {
		return s.r.Transfer(op, tx, rx)
	}
	r := s.r
	r.chip.SetCS(true, r.now)
	for i := range tx {
		if i == 4 && rx[2] >= 96 {
			r.now += s.pause
			s.paused = true
		}
		r.now += r.byteNs
		rx[i] = r.chip.Exchange(tx[i], 0, 10_000_000, r.now)
	}
	r.chip.SetCS(false, r.now)
	r.now += 50
	return nil
}

// errorPassRig transmits a frame nobody ACKs and services the chip's interrupts
// until an error event leaves error-active (TEC 96 sets EFLG.TXWAR and ERRIF),
// with the error pass's READ paused for pause ns (0: never) once it reads TEC ≥ 96.
// It returns that event.
func errorPassRig(t *testing.T, pause int64) (mcp2515.ErrorEvent, *pausedSPI) {
	t.Helper()
	s := &pausedSPI{pause: pause}
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
				return e, s
			}
			if e.TEC >= 96 || e.TXWarning || e.TXPassive {
				t.Fatalf("error-active event with TEC %d, TX warning %v, TX passive %v", e.TEC, e.TXWarning, e.TXPassive)
			}
		}
	}
	t.Fatalf("no error-warning or error-passive event after 100 interrupts: %+v", r.errs)
	return mcp2515.ErrorEvent{}, nil
}

// An error event's counters are never older than its state: when the error
// pass's READ of TEC..EFLG is paused after the counters long enough for the
// failing retransmissions to take the chip from error-warning to error-passive,
// EFLG (read last) says passive while TEC says 96; the driver reads TEC and REC
// again after EFLG.
func TestErrorPassCountersFollowTheState(t *testing.T) {
	e, s := errorPassRig(t, 2_000_000) // 2 ms: ~15 failed retransmissions at 1 Mbit/s
	if !s.paused {
		t.Fatal("the error pass's READ was not paused")
	}
	if e.State != canstate.ErrorPassive || !e.TXPassive || e.TEC < 128 || e.REC != 0 {
		t.Fatalf("error event: state %v, TX passive %v, TEC %d, REC %d; want error-passive with TEC ≥ 128, REC 0 (the counters read after EFLG)", e.State, e.TXPassive, e.TEC, e.REC)
	}
	if s.rereads != 1 {
		t.Fatalf("%d READs of TEC and REC after the error pass's, want 1", s.rereads)
	}
}

// Counters that agree with EFLG cost no further READ.
func TestErrorPassConsistentCountersReadOnce(t *testing.T) {
	e, s := errorPassRig(t, 0)
	if e.State != canstate.ErrorWarning || !e.TXWarning || e.TEC < 96 || e.TEC > 127 || e.REC != 0 {
		t.Fatalf("error event: state %v, TX warning %v, TEC %d, REC %d; want error-warning with TEC 96..127, REC 0", e.State, e.TXWarning, e.TEC, e.REC)
	}
	if s.rereads != 0 {
		t.Fatalf("%d READs of TEC and REC after a consistent error pass, want 0", s.rereads)
	}
}
