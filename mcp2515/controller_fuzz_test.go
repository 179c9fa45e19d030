package mcp2515_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.einride.tech/can"

	"cand/canstate"
	"cand/mcp2515"
	"cand/sim/mcpchip"
)

// FuzzController runs the driver against a chip that answers with the fuzzer's
// bytes: MISO comes from miso, INT levels from the bits of intr, the calls from
// script. Seeds are sessions recorded against the chip model, so the fuzzer starts
// from answers a real chip gives. Whatever the answers, no call panics or loops
// (every call returns within a bounded number of transfers), every transfer is a
// well-formed instruction labelled with its Op, frames handed up are valid CAN
// frames, only loaded TX buffers are reported sent or failed, and every error
// says what went wrong.
func FuzzController(f *testing.F) {
	for _, s := range driverSessions {
		miso, intr := recordSession(f, s.cfg, s.script)
		f.Add(s.cfg, s.script, miso, intr)
	}
	f.Fuzz(func(t *testing.T, cfg uint8, script, miso, intr []byte) {
		if len(miso) > maxFuzzMISO {
			miso = miso[:maxFuzzMISO]
		}
		chip := &fuzzChip{t: t, miso: miso, intr: intr, loaded: -1}
		ctl := mcp2515.New(chip, chip, driverConfig(cfg), chip.clock)
		runScript(t, ctl, chip, script, nil)
	})
}

// maxFuzzMISO bounds the answers, and repollBudget how often the polling calls
// (Init, Reset, SetMode, Stop) of one input may read CANSTAT again: they poll it,
// sleeping 50 µs after each wrong answer, until it answers right or a wall-clock
// deadline passes (10 ms of silence, 1 s), so wrong answers mostly buy sleeps, which
// on a loaded machine last milliseconds. Past the budget the fuzzed chip stops
// answering, which the driver must pass on as the transport's error.
const (
	maxFuzzMISO  = 1024
	repollBudget = 8
)

// hangGuard is the most transfers one non-polling call may make. HandleInterrupt
// stops after a fixed number of passes of a few transfers each; the others make
// one or two.
const hangGuard = 1024

// Script operations, one per byte (value modulo numDriverOps).
const (
	opInit = iota
	opHandle
	opCheck
	opTransmit // the frame follows: ID (4 bytes LE), flags (bit 0 extended, bit 1 remote, bits 4..7 length), 8 data bytes
	opAbort
	opCounters
	opStop
	opSetMode // the mode byte follows
	opReset
	opWait // let the chip work (recording only): until INT is asserted, at most 5 ms
	numDriverOps
)

type driverSession struct {
	cfg    uint8
	script []byte
}

func transmitOp(id uint32, flags byte, data ...byte) []byte {
	b := binary.LittleEndian.AppendUint32([]byte{opTransmit}, id)
	b = append(b, flags)
	return append(b, append(data, make([]byte, 8-len(data))...)...)
}

func join(ops ...[]byte) []byte {
	var b []byte
	for _, op := range ops {
		b = append(b, op...)
	}
	return b
}

// driverSessions are the seeds, recorded against the chip model in loopback mode.
var driverSessions = []driverSession{
	// Init, one frame out and back in, the health check and the counters.
	{cfgLoopback, join([]byte{opInit}, transmitOp(0x123, 2<<4, 0xDE, 0xAD), []byte{opWait, opHandle, opCheck, opCounters}, []byte{opWait, opHandle})},
	// Three frames fill the TX buffers, a fourth is refused; then abort and stop.
	{cfgLoopback, join([]byte{opInit}, transmitOp(0x100, 8<<4, 1, 2, 3, 4, 5, 6, 7, 8), transmitOp(0x18DAF110, 1|8<<4, 9),
		transmitOp(0x7FF, 2|0<<4), transmitOp(0x1, 1<<4), []byte{opAbort, opWait, opHandle, opWait, opHandle, opStop})},
	// One-shot with filters and two TX buffers: an extended remote frame, a mode
	// change back and forth, a reset.
	{cfgLoopback | cfgOneShot | cfgFilters | 2<<cfgTXBuffersShift, join([]byte{opInit}, transmitOp(0x18DAF0AA, 3|15<<4),
		[]byte{opWait, opHandle, opSetMode, mcp2515.ModeConfig, opSetMode, mcp2515.ModeLoopback, opCheck, opReset, opCheck})},
}

// The cfg byte of FuzzController.
const (
	cfgOneShot        = 1 << 0
	cfgFilters        = 1 << 1
	cfgTXBuffersShift = 2 // bits 2..3: Config.TXBuffers
	cfgTXBuffersMask  = 3 << cfgTXBuffersShift
	cfgLoopback       = mcp2515.ModeLoopback // bits 5..7: Config.Mode
	cfgModeMask       = 0xE0
)

// The bus, the chip's crystal and the SPI timing of the sessions.
const (
	fuzzBitrate        = 500_000
	fuzzOscillatorHz   = 16_000_000
	fuzzByteNs         = 900 // a byte at 10 MHz with the gap between bytes
	fuzzCSHighNs       = 50
	fuzzWaitStepNs     = 1000
	fuzzWaitMaxSteps   = 5000
	fuzzModelStartupNs = 1_000_000
)

func driverConfig(cfg uint8) mcp2515.Config {
	bt, err := mcp2515.CalcBitTiming(fuzzOscillatorHz, fuzzBitrate, 0, false)
	if err != nil {
		panic(err)
	}
	c := mcp2515.Config{CNF1: bt.CNF1, CNF2: bt.CNF2, CNF3: bt.CNF3, Mode: mcp2515.Mode(cfg & cfgModeMask), OneShot: cfg&cfgOneShot != 0,
		TXBuffers: int(cfg&cfgTXBuffersMask) >> cfgTXBuffersShift, Bitrate: fuzzBitrate}
	if cfg&cfgFilters != 0 {
		c.Filters = &mcp2515.Filters{
			Mask:     [2]mcp2515.FilterID{{ID: 0x700}, {ID: 0x1FFFF000, Extended: true}},
			Filter:   [6]mcp2515.FilterID{{ID: 0x100}, {ID: 0x123}, {ID: 0x18DAF000, Extended: true}},
			NFilters: 3, Rollover: true,
		}
	}
	return c
}

// fuzzChip is the SPI transport and INT line of FuzzController: a chip that answers
// with the fuzzer's bytes and checks every transfer the driver makes.
type fuzzChip struct {
	t          testing.TB
	miso, intr []byte
	intBit     int
	now        int64
	xfers      int
	polling    bool // in a polling call
	callPolls  int  // CANSTAT reads in this call
	repolls    int  // CANSTAT reads after the first of their call, this input
	lastINT    bool
	want       *can.Frame // the frame a Transmit is loading
	loaded     int        // TX buffer of the last LOAD TX BUFFER, -1 after its RTS
}

// errMISO is the transport's failure once the fuzzer's answers or the repoll
// budget run out.
var errMISO = errors.New("spi: the fuzzed chip stopped answering")

func (c *fuzzChip) clock() int64 { return c.now }

func (c *fuzzChip) Asserted() bool {
	if c.intBit >= 8*len(c.intr) {
		c.lastINT = false
		return false
	}
	c.lastINT = c.intr[c.intBit/8]>>(c.intBit%8)&1 != 0
	c.intBit++
	return c.lastINT
}

func (c *fuzzChip) Transfer(op mcp2515.Op, tx, rx []byte) error {
	c.t.Helper()
	c.xfers++
	if c.polling && op == mcp2515.OpRead && len(tx) > 1 && mcp2515.Addr(tx[1]) == mcp2515.RegCANSTAT {
		if c.callPolls++; c.callPolls > 1 {
			c.repolls++
		}
	}
	if msg := checkTransfer(op, tx, rx); msg != "" {
		c.t.Fatalf("%v transfer % x: %s", op, tx, msg)
	}
	switch op {
	case mcp2515.OpLoadTxBuf:
		if msg := checkLoad(tx, c.want); msg != "" {
			c.t.Fatalf("LOAD TX BUFFER % x for %+v: %s", tx, c.want, msg)
		}
		c.loaded = int(tx[0]&7) >> 1
	case mcp2515.OpRTS:
		if c.loaded < 0 || tx[0]&7 != 1<<c.loaded {
			c.t.Fatalf("RTS %#02x, last loaded TX buffer %d", tx[0], c.loaded)
		}
		c.loaded = -1
	}
	if len(c.miso) < len(tx) {
		c.miso = nil
		return fmt.Errorf("%v transfer of %d bytes: out of answers: %w", op, len(tx), errMISO)
	}
	if c.repolls > repollBudget {
		return fmt.Errorf("CANSTAT read again %d times: %w", c.repolls, errMISO)
	}
	copy(rx, c.miso)
	c.miso = c.miso[len(tx):]
	c.now += int64(len(tx))*fuzzByteNs + fuzzCSHighNs
	return nil
}

// checkTransfer says what is wrong with a transfer the driver asks for: lengths,
// the instruction against its Op, addresses inside the register map, BIT MODIFY only
// on registers that apply its mask (datasheet §12.10).
func checkTransfer(op mcp2515.Op, tx, rx []byte) string {
	if len(tx) == 0 || len(rx) != len(tx) {
		return fmt.Sprintf("%d bytes out, room for %d in", len(tx), len(rx))
	}
	in := tx[0]
	var ok bool
	switch op {
	case mcp2515.OpReset:
		ok = in == mcp2515.InstrReset && len(tx) == 1
	case mcp2515.OpRead:
		ok = in == mcp2515.InstrRead && len(tx) >= 3 && int(tx[1])+len(tx)-2 <= mcp2515.RegisterFileSize
	case mcp2515.OpWrite:
		ok = in == mcp2515.InstrWrite && len(tx) >= 3 && int(tx[1])+len(tx)-2 <= mcp2515.RegisterFileSize
	case mcp2515.OpBitModify:
		ok = in == mcp2515.InstrBitModify && len(tx) == 4 && mcp2515.IsBitModifiable(mcp2515.Addr(tx[1]))
	case mcp2515.OpReadStatus:
		ok = in == mcp2515.InstrReadStatus && len(tx) == 2
	case mcp2515.OpRxStatus:
		ok = in == mcp2515.InstrRxStatus && len(tx) == 2
	case mcp2515.OpReadRxBuf:
		ok = in&^(mcp2515.RxBufRXB1SIDH|0x02) == mcp2515.InstrReadRxBuf && len(tx) == 14
	case mcp2515.OpLoadTxBuf:
		ok = in&0xF8 == mcp2515.InstrLoadTxBuf && in&0x07 <= 5 && len(tx) >= 6
	case mcp2515.OpRTS:
		ok = in&0xF8 == mcp2515.InstrRTS && in&0x07 != 0 && len(tx) == 1
	default:
		return "unknown Op"
	}
	if !ok {
		return "not a well-formed " + op.String()
	}
	return ""
}

// checkLoad: LOAD TX BUFFER carries the frame Transmit was given, from SIDH on.
func checkLoad(tx []byte, want *can.Frame) string {
	if want == nil {
		return "outside Transmit"
	}
	if tx[0]&1 != 0 {
		return "starts at D0, not SIDH"
	}
	mask := uint32(0x7FF)
	if want.IsExtended {
		mask = 0x1FFFFFFF
	}
	id, ext := mcp2515.GetID(tx[1:5])
	n := min(int(want.Length), 8)
	if want.IsRemote {
		n = 0
	}
	switch {
	case id != want.ID&mask || ext != want.IsExtended:
		return fmt.Sprintf("ID %#x extended %v", id, ext)
	case (mcp2515.Bits(tx[5])&mcp2515.DLCRTR != 0) != want.IsRemote || int(mcp2515.Bits(tx[5])&mcp2515.DLCMask) != min(int(want.Length), 8):
		return fmt.Sprintf("DLC byte %#02x", tx[5])
	case len(tx) != 6+n || string(tx[6:]) != string(want.Data[:n]):
		return fmt.Sprintf("%d data bytes", len(tx)-6)
	}
	return ""
}

// fuzzSink checks what the driver hands up.
type fuzzSink struct {
	t       testing.TB
	pending map[int]bool // TX buffers Transmit loaded and nothing reported yet
}

func (s *fuzzSink) Received(f *can.Frame) {
	switch {
	case f.Length > 8:
		s.t.Fatalf("frame with %d data bytes: %+v", f.Length, f)
	case !f.IsExtended && f.ID > 0x7FF, f.ID > 0x1FFFFFFF:
		s.t.Fatalf("frame ID %#x (extended %v)", f.ID, f.IsExtended)
	case f.IsRemote && f.Data != (can.Data{}):
		s.t.Fatalf("remote frame with data: %+v", f)
	}
}

func (s *fuzzSink) done(buf int, what string) {
	if !s.pending[buf] {
		s.t.Fatalf("%s(%d) for a TX buffer not loaded (pending %v)", what, buf, s.pending)
	}
	delete(s.pending, buf)
}

func (s *fuzzSink) Transmitted(buf int) { s.done(buf, "Transmitted") }
func (s *fuzzSink) TxFailed(buf int)    { s.done(buf, "TxFailed") }
func (s *fuzzSink) TXFreed()            {}

func (s *fuzzSink) Error(e *mcp2515.ErrorEvent) {
	if e.State > canstate.BusOff || e.Prev > canstate.BusOff || (!e.ChipReset && e.State != mcp2515.StateFromEFLG(e.EFLG)) {
		s.t.Fatalf("error event %+v", *e)
	}
}

func (s *fuzzSink) BothFull(ns int64) {
	if ns < 0 {
		s.t.Fatalf("both RX buffers full for %d ns", ns)
	}
}

// driverEnv is what runScript needs of the chip: its transfer count, whether the call
// under way polls, the frame a Transmit is loading, and the INT level last read.
type driverEnv interface {
	transfers() int
	startCall(polls bool)
	setFrame(f *can.Frame)
	lastAsserted() bool
}

func (c *fuzzChip) transfers() int        { return c.xfers }
func (c *fuzzChip) startCall(polls bool)  { c.polling, c.callPolls = polls, 0 }
func (c *fuzzChip) setFrame(f *can.Frame) { c.want, c.loaded = f, -1 }
func (c *fuzzChip) lastAsserted() bool    { return c.lastINT }

// runScript calls the driver as script says, checking each call. wait, when not
// nil, lets the chip work for opWait.
func runScript(t testing.TB, ctl *mcp2515.Controller, env driverEnv, script []byte, wait func()) {
	t.Helper()
	sink := &fuzzSink{t: t, pending: map[int]bool{}}
	for len(script) > 0 {
		op := script[0] % numDriverOps
		script = script[1:]
		before := env.transfers()
		var err error
		polls := op == opInit || op == opReset || op == opStop || op == opSetMode
		env.startCall(polls)
		switch op {
		case opInit:
			err = ctl.Init()
		case opReset:
			err = ctl.Reset()
		case opStop:
			err = ctl.Stop()
		case opSetMode:
			mode := byte(0)
			if len(script) > 0 {
				mode, script = script[0], script[1:]
			}
			err = ctl.SetMode(mcp2515.Mode(mode))
		case opHandle:
			var done bool
			done, err = ctl.HandleInterrupt(sink)
			if err == nil && done == env.lastAsserted() {
				t.Fatalf("HandleInterrupt done=%v with INT asserted=%v at its end", done, env.lastAsserted())
			}
		case opCheck:
			err = ctl.Check()
		case opTransmit:
			var b [13]byte
			script = script[copy(b[:], script):]
			fr := can.Frame{ID: binary.LittleEndian.Uint32(b[0:]), IsExtended: b[4]&1 != 0, IsRemote: b[4]&2 != 0, Length: b[4] >> 4}
			copy(fr.Data[:], b[5:])
			free := ctl.TxFree()
			env.setFrame(&fr)
			var buf int
			buf, err = ctl.Transmit(&fr)
			env.setFrame(nil)
			switch {
			case err == nil && (!free || buf < 0 || buf > 2 || sink.pending[buf]):
				t.Fatalf("Transmit used TX buffer %d (free %v, pending %v)", buf, free, sink.pending)
			case err == nil:
				sink.pending[buf] = true
			case free == errors.Is(err, mcp2515.ErrTXFull):
				t.Fatalf("Transmit: %v with TxFree %v", err, free)
			}
		case opAbort:
			err = ctl.Abort()
		case opCounters:
			_, _, err = ctl.Counters()
		case opWait:
			if wait != nil {
				wait()
			}
		}
		if n := env.transfers() - before; !polls && n > hangGuard {
			t.Fatalf("operation %d made %d transfers", op, n)
		}
		if err != nil {
			checkDriverError(t, err)
		}
		if (op == opInit || op == opReset) && ctl.Pending() == 0 {
			clear(sink.pending) // a RESET forgets the TX buffers
		}
		if ctl.Pending() != len(sink.pending) || ctl.Pending() > 3 || ctl.State() > canstate.BusOff {
			t.Fatalf("after operation %d: %d pending (loaded %v), state %v", op, ctl.Pending(), sink.pending, ctl.State())
		}
	}
}

// checkDriverError: an error is the transport's, one of the driver's sentinels, or
// says in the driver's words what was wrong.
func checkDriverError(t testing.TB, err error) {
	t.Helper()
	switch {
	case errors.Is(err, errMISO), errors.Is(err, mcp2515.ErrTXFull), errors.Is(err, mcp2515.ErrChipReset), errors.Is(err, mcp2515.ErrNoChip):
	case strings.HasPrefix(err.Error(), "mcp2515: ") && len(err.Error()) > len("mcp2515: ")+10:
	default:
		t.Fatalf("unexplained error %q", err)
	}
}

// modelChip runs the same script against the chip model and records its answers
// and INT levels: the seeds of FuzzController.
type modelChip struct {
	chip    *mcpchip.Chip
	now     int64
	xfers   int
	miso    []byte
	intr    []byte
	nbits   int
	lastINT bool
}

func (m *modelChip) Transfer(op mcp2515.Op, tx, rx []byte) error {
	m.chip.SetCS(true, m.now)
	for i := range tx {
		m.now += fuzzByteNs
		rx[i] = m.chip.Exchange(tx[i], 0, mcp2515.InstrMaxSCLK, m.now)
	}
	m.chip.SetCS(false, m.now)
	m.now += fuzzCSHighNs
	m.xfers++
	m.miso = append(m.miso, rx...)
	return nil
}

func (m *modelChip) Asserted() bool {
	m.lastINT = !m.chip.Level(m.now)
	if m.nbits%8 == 0 {
		m.intr = append(m.intr, 0)
	}
	if m.lastINT {
		m.intr[m.nbits/8] |= 1 << (m.nbits % 8)
	}
	m.nbits++
	return m.lastINT
}

func (m *modelChip) transfers() int      { return m.xfers }
func (m *modelChip) startCall(bool)      {}
func (m *modelChip) setFrame(*can.Frame) {}
func (m *modelChip) lastAsserted() bool  { return m.lastINT }

func (m *modelChip) wait() {
	for range fuzzWaitMaxSteps {
		if !m.chip.Level(m.now) {
			return
		}
		m.now += fuzzWaitStepNs
	}
}

// recordSession runs script against the chip model (the calls checked as for a fuzz
// input) and returns the model's answers.
func recordSession(tb testing.TB, cfg uint8, script []byte) (miso, intr []byte) {
	chip := mcpchip.New(fuzzOscillatorHz, nil)
	m := &modelChip{chip: chip, now: chip.Bus().Clock().Now() + fuzzModelStartupNs}
	ctl := mcp2515.New(m, m, driverConfig(cfg), func() int64 { return m.now })
	runScript(tb, ctl, m, script, m.wait)
	return m.miso, m.intr
}
