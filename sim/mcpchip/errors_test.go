package mcpchip

import (
	"bytes"
	"testing"

	"go.einride.tech/can"

	"cand/mcp2515"
	"cand/sim/canbus"
)

func TestErrorCountingPassiveBusOffRecovery(t *testing.T) {
	r, b, ps := busRig(t, listener("p"))
	r.setup500k(mcp2515.ModeNormal)
	b.NoAck(r.at, r.at+20_000_000)
	r.loadTx(0, 0x123, false, 0)
	r.xfer(mcp2515.InstrRTS | 1)
	// Each attempt: ACK error, TEC += 8. Frame 0x123 DLC 0 is 48 bits; the ACK error
	// comes after 37 bits, then 17 bits of error frame: 54 bits per attempt.
	r.wait(11*54*bit500k + 20*bit500k)
	r.expect(mcp2515.RegTEC, 88)
	r.expect(mcp2515.RegEFLG, 0)
	r.wait(54 * bit500k)
	r.expect(mcp2515.RegTEC, 96)
	r.expect(mcp2515.RegEFLG, mcp2515.EFLGTXWAR|mcp2515.EFLGEWARN)
	if intf := r.read(mcp2515.RegCANINTF); intf != mcp2515.IntERR|mcp2515.IntMERR {
		t.Fatalf("CANINTF = %#02x, want ERRIF|MERRF", intf)
	}
	// Error-passive at 128; ACK errors of an error-passive transmitter don't count.
	r.wait(100 * 54 * bit500k)
	r.expect(mcp2515.RegTEC, 128)
	r.expect(mcp2515.RegEFLG, mcp2515.EFLGTXEP|mcp2515.EFLGTXWAR|mcp2515.EFLGEWARN)
	r.expect(mcp2515.RegTXB0CTRL, mcp2515.TXBCTRLTXERR|mcp2515.TXBCTRLTXREQ)
	if s := ps[0].Stats(); s.RxErrors < 100 || s.Received != 0 {
		t.Fatalf("peer %+v: want form errors for every attempt, no frame", s)
	}
	// ACKs again: the frame goes out, TEC 127, no longer passive.
	r.wait(20_000_000 - (r.at - b.Stats().LastSOF))
	r.wait(1_000_000)
	r.expect(mcp2515.RegTEC, 127)
	r.expect(mcp2515.RegEFLG, mcp2515.EFLGTXWAR|mcp2515.EFLGEWARN)
	if s := r.status(); s&mcp2515.StatusTX0IF == 0 {
		t.Fatalf("READ STATUS %#02x: frame not sent after ACKs came back", s)
	}
	// Stuck dominant bus with a frame pending: TEC +8 per 8 dominant bits → bus-off.
	r.write(mcp2515.RegCANINTF, 0)
	stuck := r.at + 10_000
	b.StuckDominant(stuck, stuck+1_000_000)
	r.xfer(mcp2515.InstrRTS | 1)
	r.wait(1_000_000)
	r.expect(mcp2515.RegEFLG, mcp2515.EFLGTXBO|mcp2515.EFLGTXEP|mcp2515.EFLGTXWAR|mcp2515.EFLGEWARN)
	r.expect(mcp2515.RegTEC, 255)
	// Recovery: 128 × 11 recessive bits after the bus is released.
	release := stuck + 1_000_000
	recovered := release + 128*11*bit500k
	r.wait(recovered - 1 - 3*byteNs - r.at)
	if e := r.read(mcp2515.RegEFLG); e&mcp2515.EFLGTXBO == 0 {
		t.Fatalf("EFLG %#02x: recovered before 128×11 recessive bits", e)
	}
	r.wait(recovered - r.at)
	r.expect(mcp2515.RegEFLG, 0)
	r.expect(mcp2515.RegTEC, 0)
	r.wait(1_000_000)
	if s := r.status(); s&mcp2515.StatusTX0IF == 0 || s&mcp2515.StatusTXB0REQ != 0 {
		t.Fatalf("READ STATUS %#02x: the pending frame should go out after recovery", s)
	}
}

func TestReceiveErrorsAndBitrateMismatch(t *testing.T) {
	r, b, ps := busRig(t, listener("a"), listener("b"))
	r.setup500k(mcp2515.ModeNormal)
	r.write(mcp2515.RegCANCTRL, mcp2515.REQOP(mcp2515.ModeConfig))
	r.write(mcp2515.RegCNF1, 0x01) // 250 kbit/s on a 500 kbit/s bus
	r.write(mcp2515.RegCANCTRL, mcp2515.REQOP(mcp2515.ModeNormal))
	r.wait(11 * 2 * bit500k) // bus integration: 11 bits at the chip's bit time
	for i := 0; i < 3; i++ {
		ps[0].Send(can.Frame{ID: 0x10})
	}
	r.wait(1_000_000)
	r.expect(mcp2515.RegREC, 3)
	if intf := r.read(mcp2515.RegCANINTF); intf != mcp2515.IntMERR {
		t.Fatalf("CANINTF = %#02x, want MERRF only (nothing received)", intf)
	}
	if got := len(ps[1].Received()); got != 3 {
		t.Fatalf("peer b received %d", got)
	}
	// The chip's own frames are destroyed: TEC += 8, and peers see bit errors.
	r.loadTx(0, 0x20, false, 0)
	r.xfer(mcp2515.InstrWrite, byte(mcp2515.RegTXB0CTRL), byte(mcp2515.TXBCTRLTXREQ))
	r.wait(200 * bit500k)
	if tec := r.read(mcp2515.RegTEC); tec < 8 {
		t.Fatalf("TEC = %d after garbled transmissions", tec)
	}
	if s := b.Stats(); s.Frames != 3 {
		t.Fatalf("bus frames %d, want only the peer's 3", s.Frames)
	}
	// Injected errors: REC +1 per error as a receiver, −1 per good frame.
	r2, b2, ps2 := busRig(t, listener("a"))
	r2.setup500k(mcp2515.ModeNormal)
	b2.InjectErrors(0, 4)
	ps2[0].Send(can.Frame{ID: 0x10})
	r2.wait(1_000_000)
	r2.expect(mcp2515.RegREC, 3) // 4 errors, then the frame
	if s := r2.c.Stats(); s.RxErrors != 4 || s.Received != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestErratum5Repeat(t *testing.T) {
	f := can.Frame{ID: 0x123, Length: 8}
	for _, tc := range []struct {
		name    string
		mode    uint8
		write   bool
		repeats uint64
	}{
		{"RTS mode 0,0", 0, false, 0},
		{"RTS mode 1,1", 3, false, 3},
		{"WRITE TXREQ mode 0,0", 0, true, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, b, ps := busRig(t, listener("p"))
			r.setup500k(mcp2515.ModeNormal)
			r.loadTx(0, f.ID, false, 8, make([]byte, 8)...)
			frame := int64(canbus.FrameBits(f)) * bit500k
			r.c.SetCS(true, r.at)
			if tc.write {
				for _, x := range []byte{mcp2515.InstrWrite, byte(mcp2515.RegTXB0CTRL), byte(mcp2515.TXBCTRLTXREQ)} {
					r.at += byteNs
					r.c.Exchange(x, tc.mode, sclk, r.at)
				}
			} else {
				r.at += byteNs
				r.c.Exchange(mcp2515.InstrRTS|1, tc.mode, sclk, r.at)
			}
			// CS stays low for 3.5 frame times.
			r.at += frame * 7 / 2
			r.c.SetCS(false, r.at)
			r.wait(2 * frame)
			if got := uint64(len(ps[0].Received())); got != 1+tc.repeats {
				t.Fatalf("peer received %d frames, want %d", got, 1+tc.repeats)
			}
			if s := r.c.Stats(); s.Repeats != tc.repeats || s.Sent != 1+tc.repeats {
				t.Fatalf("stats %+v", s)
			}
			if s := r.status(); s != mcp2515.StatusTX0IF {
				t.Fatalf("READ STATUS %#02x, want TX0IF and TXREQ clear", s)
			}
			_ = b
		})
	}
}

func TestModeChangeWaitsForFrameAndABAT(t *testing.T) {
	r, _, _ := busRig(t, listener("p"))
	r.setup500k(mcp2515.ModeNormal)
	r.loadTx(0, 0x100, false, 8, make([]byte, 8)...)
	r.xfer(mcp2515.InstrRTS | 1)
	r.write(mcp2515.RegCANCTRL, mcp2515.REQOP(mcp2515.ModeConfig))
	if m := mcp2515.OPMOD(r.read(mcp2515.RegCANSTAT)); m != mcp2515.ModeNormal {
		t.Fatalf("OPMOD %#02x while transmitting, want Normal until the frame ends", m)
	}
	r.wait(400 * bit500k)
	if m := r.read(mcp2515.RegCANSTAT) & mcp2515.CANSTATOPMOD; m != mcp2515.ModeConfig {
		t.Fatalf("OPMOD %#02x after the frame, want Configuration", m)
	}
	// ABAT aborts pending buffers: TXREQ clears, ABTF sets; while ABAT stays set, a
	// new request is aborted at once.
	r.modify(mcp2515.RegTXB1CTRL, mcp2515.TXBCTRLTXREQ, mcp2515.TXBCTRLTXREQ)
	r.modify(mcp2515.RegTXB2CTRL, mcp2515.TXBCTRLTXREQ, mcp2515.TXBCTRLTXREQ)
	r.modify(mcp2515.RegCANCTRL, mcp2515.CANCTRLABAT, mcp2515.CANCTRLABAT)
	r.expect(mcp2515.RegTXB1CTRL, mcp2515.TXBCTRLABTF)
	r.expect(mcp2515.RegTXB2CTRL, mcp2515.TXBCTRLABTF)
	r.xfer(mcp2515.InstrRTS | 1)
	r.expect(mcp2515.RegTXB0CTRL, mcp2515.TXBCTRLABTF)
	r.modify(mcp2515.RegCANCTRL, mcp2515.CANCTRLABAT, 0)
	r.xfer(mcp2515.InstrRTS | 1)
	r.expect(mcp2515.RegTXB0CTRL, mcp2515.TXBCTRLTXREQ) // Configuration mode: waits
}

// A mode change waits for every pending transmission, not only the frame on the wire
// (datasheet §10): a frame that keeps failing holds the chip in Normal mode until it
// goes out or is aborted.
func TestModeChangeWaitsForPendingTransmissions(t *testing.T) {
	r, b, _ := busRig(t, listener("p"))
	r.setup500k(mcp2515.ModeNormal)
	noAckUntil := r.at + 2_000_000
	b.NoAck(r.at, noAckUntil)
	r.loadTx(0, 0x100, false, 0)
	r.loadTx(1, 0x101, false, 0)
	r.xfer(mcp2515.InstrRTS | 3)
	r.write(mcp2515.RegCANCTRL, mcp2515.REQOP(mcp2515.ModeConfig))
	r.wait(400 * bit500k) // several failed attempts
	if m := mcp2515.OPMOD(r.read(mcp2515.RegCANSTAT)); m != mcp2515.ModeNormal {
		t.Fatalf("OPMOD %#02x with TXB0 and TXB1 pending, want Normal", m)
	}
	r.wait(noAckUntil - r.at)
	r.wait(200 * bit500k) // ACKs again: both frames go out, then the mode changes
	if s := r.status(); s != mcp2515.StatusTX0IF|mcp2515.StatusTX1IF {
		t.Fatalf("READ STATUS %#02x, want TX0IF and TX1IF, no TXREQ", s)
	}
	if m := r.read(mcp2515.RegCANSTAT) & mcp2515.CANSTATOPMOD; m != mcp2515.ModeConfig {
		t.Fatalf("OPMOD %#02x after the pending frames went out, want Configuration", m)
	}

	// A frame that cannot go out: the change waits until ABAT ends its retries.
	r.write(mcp2515.RegCANCTRL, mcp2515.REQOP(mcp2515.ModeNormal))
	r.write(mcp2515.RegCANINTF, 0)
	b.NoAck(r.at, r.at+1_000_000_000)
	r.xfer(mcp2515.InstrRTS | 1)
	r.write(mcp2515.RegCANCTRL, mcp2515.REQOP(mcp2515.ModeConfig))
	r.wait(400 * bit500k)
	if m := mcp2515.OPMOD(r.read(mcp2515.RegCANSTAT)); m != mcp2515.ModeNormal {
		t.Fatalf("OPMOD %#02x with TXB0 retrying, want Normal", m)
	}
	r.write(mcp2515.RegCANCTRL, mcp2515.ModeConfig|mcp2515.CANCTRLABAT)
	r.wait(100 * bit500k) // the attempt on the wire fails and is not retried
	if m := r.read(mcp2515.RegCANSTAT) & mcp2515.CANSTATOPMOD; m != mcp2515.ModeConfig {
		t.Fatalf("OPMOD %#02x after ABAT, want Configuration", m)
	}
	r.expect(mcp2515.RegTXB0CTRL, mcp2515.TXBCTRLABTF|mcp2515.TXBCTRLTXERR)
}

func TestSleepWakeOnBusActivity(t *testing.T) {
	r, _, ps := busRig(t, listener("a"), listener("b"))
	r.setup500k(mcp2515.ModeSleep)
	r.write(mcp2515.RegCANINTE, mcp2515.IntWAK)
	ps[0].Send(can.Frame{ID: 0x10})
	r.wait(1_000_000)
	if intf := r.read(mcp2515.RegCANINTF); intf != mcp2515.IntWAK {
		t.Fatalf("CANINTF %#02x, want WAKIF (the waking frame is not received)", intf)
	}
	if m := r.read(mcp2515.RegCANSTAT); m != mcp2515.ModeListenOnly|mcp2515.ICODWake {
		t.Fatalf("CANSTAT %#02x, want Listen-only, ICOD wake", m)
	}
	if len(r.int) != 1 || r.int[0].high {
		t.Fatalf("INT edges %v", r.int)
	}
}

// Waking up restarts the oscillator: the start-up timer (128 OSC1 cycles, 8 µs at
// 16 MHz) runs again, as after power-on (datasheet §8.1), whether the MCU forces
// WAKIF or bus activity wakes the chip. Meanwhile SPI is ignored.
func TestWakeUpOscillatorStartUp(t *testing.T) {
	r, b, ps := busRig(t, listener("a"), listener("b"))
	r.setup500k(mcp2515.ModeSleep)
	r.write(mcp2515.RegCANINTE, mcp2515.IntWAK)
	woke := r.at + 3*byteNs // the WRITE's data byte
	r.write(mcp2515.RegCANINTF, mcp2515.IntWAK)
	ignored := r.c.Stats().Ignored
	if got := r.xfer(mcp2515.InstrRead, byte(mcp2515.RegCANSTAT), 0); !bytes.Equal(got, []byte{0xFF, 0xFF, 0xFF}) {
		t.Fatalf("READ CANSTAT %d ns after the wake-up = % x, want ff ff ff (start-up)", r.at-woke, got)
	}
	if n := r.c.Stats().Ignored - ignored; n != 3 {
		t.Fatalf("%d bytes ignored, want 3", n)
	}
	r.at = woke + 8000
	r.expect(mcp2515.RegCANSTAT, mcp2515.ModeListenOnly|mcp2515.ICODWake)
	r.expect(mcp2515.RegCANINTE, mcp2515.IntWAK) // the registers kept their contents

	// Bus activity wakes it at the end of the frame.
	r.write(mcp2515.RegCANCTRL, mcp2515.REQOP(mcp2515.ModeSleep))
	r.write(mcp2515.RegCANINTF, 0)
	f := can.Frame{ID: 0x10}
	ps[0].Send(f)
	r.wait(10 * bit500k)
	eof := b.Stats().LastSOF + int64(canbus.FrameBits(f)-3)*bit500k
	r.wait(eof - r.at)
	if got := r.xfer(mcp2515.InstrRead, byte(mcp2515.RegCANSTAT), 0)[2]; got != 0xFF {
		t.Fatalf("READ CANSTAT right after the waking frame = %#02x, want ff (start-up)", got)
	}
	r.at = eof + 8000
	r.expect(mcp2515.RegCANSTAT, mcp2515.ModeListenOnly|mcp2515.ICODWake)
}

func TestReceivePathNoAlloc(t *testing.T) {
	r, _, ps := busRig(t, listener("a"))
	r.setup500k(mcp2515.ModeNormal)
	f := can.Frame{ID: 0x10, Length: 8}
	n := testing.AllocsPerRun(200, func() {
		ps[0].Send(f)
		r.at += 300_000
		r.c.Level(r.at)
		r.c.SetCS(true, r.at)
		for i := 0; i < 14; i++ {
			r.at += byteNs
			r.c.Exchange(mcp2515.InstrReadRxBuf, 0, sclk, r.at)
		}
		r.c.SetCS(false, r.at)
	})
	if n != 0 {
		t.Fatalf("frame receive + READ RX BUFFER allocates %v times", n)
	}
	if s := r.c.Stats(); s.Received < 200 || s.Lost != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// busOffRig brings a chip to bus-off with REC above 0 and TXB0 still pending: four
// injected errors as a receiver, then a stuck-dominant bus while it transmits.
func busOffRig(t *testing.T) *rig {
	t.Helper()
	r, b, ps := busRig(t, listener("p"))
	r.setup500k(mcp2515.ModeNormal)
	b.InjectErrors(0, 4)
	ps[0].Send(can.Frame{ID: 0x10})
	r.wait(1_000_000)
	r.loadTx(0, 0x123, false, 0)
	stuck := r.at + 10_000
	b.StuckDominant(stuck, stuck+1_000_000)
	r.xfer(mcp2515.InstrRTS | 1)
	r.wait(stuck + 1_100_000 - r.at) // released; recovery needs 128 × 11 bits more
	if e := r.read(mcp2515.RegEFLG); e&mcp2515.EFLGTXBO == 0 {
		t.Fatalf("EFLG %#02x: not bus-off", e)
	}
	r.expect(mcp2515.RegTEC, 255)
	r.expect(mcp2515.RegREC, 3)
	r.write(mcp2515.RegCANINTF, 0)
	return r
}

// Entering Configuration mode clears TEC and REC (datasheet §10.1), so the chip is
// error-active again at once, without the 128 × 11 recessive bits of bus-off recovery.
func TestConfigModeClearsErrorCounters(t *testing.T) {
	r := busOffRig(t)
	r.modify(mcp2515.RegCANCTRL, mcp2515.CANCTRLABAT, mcp2515.CANCTRLABAT) // TXB0 leaves
	r.write(mcp2515.RegCANCTRL, mcp2515.REQOP(mcp2515.ModeConfig))
	r.expect(mcp2515.RegCANSTAT, mcp2515.ModeConfig|mcp2515.ICODError)
	r.expect(mcp2515.RegTEC, 0)
	r.expect(mcp2515.RegREC, 0)
	r.expect(mcp2515.RegEFLG, 0)
	r.expect(mcp2515.RegCANINTF, mcp2515.IntERR) // the error state changed
	// Back on the bus, a frame goes out well before bus-off recovery could end.
	r.write(mcp2515.RegCANCTRL, mcp2515.REQOP(mcp2515.ModeNormal))
	r.xfer(mcp2515.InstrRTS | 1)
	r.wait(500_000) // recovery would take 128 × 11 × 2 µs = 2.8 ms
	if s := r.status(); s&mcp2515.StatusTX0IF == 0 || s&mcp2515.StatusTXB0REQ != 0 {
		t.Fatalf("READ STATUS %#02x: the frame should have gone out", s)
	}
	r.expect(mcp2515.RegTEC, 0)
}

// RESET sets TEC and REC to their reset value 0 (registers 6-1, 6-2).
func TestRESETClearsErrorCounters(t *testing.T) {
	r := busOffRig(t)
	r.xfer(mcp2515.InstrReset)
	r.at += 8000 // oscillator start-up: 128 cycles at 16 MHz
	r.expect(mcp2515.RegTEC, 0)
	r.expect(mcp2515.RegREC, 0)
	r.expect(mcp2515.RegEFLG, 0)
}

// A chip that comes on the bus while it is stuck dominant never sees 11 recessive
// bits: it counts no errors and sends nothing until the bus is released.
func TestComingOnAStuckBus(t *testing.T) {
	r, b, ps := busRig(t, listener("a"))
	r.setup500k(mcp2515.ModeConfig)
	r.loadTx(0, 0x123, false, 0)
	r.xfer(mcp2515.InstrRTS | 1) // pending; Configuration mode sends nothing
	stuck := r.at + 10_000
	release := stuck + 1_000_000
	b.StuckDominant(stuck, release)
	r.wait(stuck + 100_000 - r.at)
	r.write(mcp2515.RegCANCTRL, mcp2515.REQOP(mcp2515.ModeNormal))
	r.wait(release - r.at)
	r.expect(mcp2515.RegTEC, 0)
	r.expect(mcp2515.RegREC, 0)
	r.expect(mcp2515.RegCANINTF, 0)
	r.wait(200 * bit500k)
	if s := r.status(); s != mcp2515.StatusTX0IF {
		t.Fatalf("READ STATUS %#02x: the pending frame should go out after the release", s)
	}
	if got := len(ps[0].Received()); got != 1 {
		t.Fatalf("peer received %d frames", got)
	}
}
