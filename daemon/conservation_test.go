package daemon

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/config"
	"cand/internal/seqcheck"
	"cand/sim/canbus"
	"cand/socketcan"
)

// The accounting rule every end-to-end test that moves frames checks at its end
// (checkConservation): no frame disappears without a counter. Per controller, once
// the daemon has stopped:
//
// TX, socket to bus. Every frame the test wrote is sent, dropped (aborted, timed
// out, one-shot failure, bus-off, a reset), refused as no CAN frame, dropped by the
// kernel from the socket queue, or left unsent in the queue at exit:
//
//	written = cand_tx_frames + cand_tx_dropped + cand_tx_invalid + cand_socket_drops + cand_tx_unsent_at_exit
//
// and the chip sent exactly cand_tx_frames frames (its own count, erratum-5 repeats
// aside), which a peer on the bus received in the order written, none twice.
//
// RX, bus to socket. Every frame the chip accepted (and ACKed) was dropped in the
// chip (RXnOVR), wiped by a reset the test caused, still waits in its buffers, or
// was read by cand; of those, the socket refused at most cand_rx_socket_errors (a
// counter shared with error frames), at most cand_rx_invalid_reads_total were torn
// (a chip reset or unplugged while cand read the buffer, after the READ RX BUFFER
// instruction had reached it: the chip clears RXnIF when CS rises, and the bytes
// cand got were no frame), and the rest the test read:
//
//	accepted = chip lost + wiped + held + cand read,  cand read = test read + refused + torn
//
// cand_error_frames is the number of error frames the test read. RXnOVR is a flag,
// not a count: cand's overflow events are at least one, and at most the chip's lost
// frames, and one is reported in (or soon after) every interval in which the chip
// dropped frames while cand could read it. The frames of the periodic and load peers
// carry a counter (canbus.Payload): what the test read of each peer shows no
// counter twice, none out of order, and no payload that is not the counter's.

// books is what the test side saw, per controller.
type books struct {
	mu      sync.Mutex
	written [][]can.Frame // frames written to the daemon, in order
	read    [][]can.Frame // data and remote frames read from it, in order
	errs    []uint64      // error frames read
	wiped   []int         // frames a chip reset wiped from the RX buffers (rig.powerCycle)

	samples  [][]overflowSample
	stopSamp chan struct{}
	sampled  chan struct{}
}

// overflowSample is one look at a controller's RX overflows: the chip's lost
// frames, cand's overflow events, and whether cand could read the chip.
type overflowSample struct {
	lost, events uint64
	chipUp       bool
}

// sampleEvery is how often the overflow intervals are sampled; reportLag how many
// samples later cand's report may come (an interrupt's error pass follows the drop
// within a frame time; the host may keep the owner thread from running meanwhile).
const (
	sampleEvery = 50 * time.Millisecond
	reportLag   = 6
)

func (b *books) init(n int) {
	b.written = make([][]can.Frame, n)
	b.read = make([][]can.Frame, n)
	b.errs = make([]uint64, n)
	b.wiped = make([]int, n)
	b.samples = make([][]overflowSample, n)
}

func (b *books) noteWrite(i int, f can.Frame) {
	b.mu.Lock()
	b.written[i] = append(b.written[i], f)
	b.mu.Unlock()
}

func (b *books) noteRead(i int, f can.Frame, k socketcan.FrameKind) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if k == socketcan.FrameError {
		b.errs[i]++
		return
	}
	b.read[i] = append(b.read[i], f)
}

func (b *books) sample(r *rig) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, p := range r.d.Owner.Ports {
		b.samples[i] = append(b.samples[i], overflowSample{
			lost: r.pi.Node(i).Chip.Stats().Lost, events: p.M.RXOverflows.Load(), chipUp: p.M.ChipUp.Load() == 1})
	}
}

// startSampling samples the overflow counters every sampleEvery until stopSampling.
func (b *books) startSampling(r *rig) {
	b.stopSamp, b.sampled = make(chan struct{}), make(chan struct{})
	b.sample(r)
	go func() {
		defer close(b.sampled)
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			select {
			case <-b.stopSamp:
				return
			case <-t.C:
				b.sample(r)
			}
		}
	}()
}

// stopSampling ends the sampling with a last sample (the daemon has stopped).
func (b *books) stopSampling(r *rig) {
	if b.stopSamp == nil {
		return
	}
	close(b.stopSamp)
	<-b.sampled
	b.stopSamp = nil
	b.sample(r)
}

// checkConservation stops the daemon, reads what it left on the sockets, and
// checks the accounting rule above for every controller.
func (r *rig) checkConservation() {
	r.t.Helper()
	r.stop()
	for i := range r.cfg.Controllers {
		r.drainHost(i)
	}
	for i := range r.cfg.Controllers {
		for _, problem := range r.conservation(i) {
			r.t.Errorf("controller %s: %s", r.cfg.Controllers[i].Name, problem)
		}
	}
}

// drainHost reads what the daemon left on every host end controller i had.
func (r *rig) drainHost(i int) {
	var b [socketcan.FrameSize]byte
	for _, fd := range r.hostEnds(i) {
		for {
			n, err := unix.Read(fd, b[:])
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil || n != socketcan.FrameSize {
				break
			}
			f, k := socketcan.Decode(&b)
			r.books.noteRead(i, f, k)
		}
	}
}

// conservation returns what does not add up for controller i.
func (r *rig) conservation(i int) []string {
	var bad []string
	fail := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	m := r.d.Owner.Ports[i].M
	chip := r.pi.Node(i).Chip
	cs := chip.Stats()
	held := chip.RXHeld()
	r.books.mu.Lock()
	written, read := r.books.written[i], r.books.read[i]
	errs, wiped, samples := r.books.errs[i], r.books.wiped[i], r.books.samples[i]
	r.books.mu.Unlock()

	txFrames, txDropped, txInvalid := m.TXFrames.Load(), m.TXDropped.Load(), m.TXInvalid.Load()
	sockDrops, unsent := m.SocketDrops.Load(), m.TXUnsentAtExit.Load()
	if got := txFrames + txDropped + txInvalid + sockDrops + unsent; uint64(len(written)) != got {
		fail("TX: %d frames written, but sent %d + dropped %d + invalid %d + socket drops %d + unsent at exit %d = %d",
			len(written), txFrames, txDropped, txInvalid, sockDrops, unsent, got)
	}
	if sent := cs.Sent - cs.Repeats; sent != txFrames {
		fail("TX: the chip sent %d frames (%d repeats aside), cand counted %d", sent, cs.Repeats, txFrames)
	}
	if problem := r.txOrder(i, written, txFrames); problem != "" {
		fail("TX: %s", problem)
	}

	rxFrames, refusedMax, torn := m.RXFrames.Load(), m.SocketWriteErrs.Load(), m.RXInvalidReads.Load()
	if uint64(len(read)) != rxFrames {
		fail("RX: cand wrote %d frames to the socket, the test read %d", rxFrames, len(read))
	}
	candRead := int64(cs.Received) - int64(wiped) - int64(held)
	if lost := candRead - int64(rxFrames); lost < 0 || uint64(lost) > refusedMax+torn {
		fail("RX: the chip accepted %d frames and lost %d; %d wiped by resets, %d still held: cand read %d, wrote %d; %d not written, at most %d (socket refused) + %d (read-backs that were no frame)",
			cs.Received+cs.Lost, cs.Lost, wiped, held, candRead, rxFrames, lost, refusedMax, torn)
	}
	if e := m.ErrorFrames.Load(); e != errs {
		fail("cand wrote %d error frames, the test read %d", e, errs)
	}
	bad = append(bad, overflowProblems(cs.Lost, m.RXOverflows.Load(), samples)...)
	bad = append(bad, sequenceProblems(r.cfg.Controllers[i].Sim.Peers, read, m.RXOrderUncertain.Load())...)
	if len(bad) > 0 {
		var peers []string
		for _, p := range r.pi.Node(i).Peers {
			peers = append(peers, fmt.Sprintf("%s %+v", p.Name(), p.Stats()))
		}
		fail("(chip %+v; peers: %s)", cs, strings.Join(peers, "; "))
	}
	return bad
}

// txOrder checks what the first peer on controller i's bus received of the written
// frames: each in the order written, none twice, sent of them in all. On a
// loopback controller the frames never reach the bus.
func (r *rig) txOrder(i int, written []can.Frame, sent uint64) string {
	peers := r.pi.Node(i).Peers
	if len(peers) == 0 || r.cfg.Controllers[i].Mode == config.ModeLoopback {
		return ""
	}
	log := peers[0].Log()
	if len(log) >= canbus.LogSize {
		return "" // the log wrapped: its start is gone
	}
	next, matched := 0, uint64(0)
	for _, rec := range log {
		if rec.Sent {
			continue
		}
		for j := next; j < len(written); j++ {
			if written[j] == rec.Frame {
				next, matched = j+1, matched+1
				break
			}
		}
	}
	if matched != sent {
		return fmt.Sprintf("peer %s received %d of the written frames in order, once each; cand sent %d", peers[0].Name(), matched, sent)
	}
	return ""
}

// overflowProblems checks cand's overflow events against the chip's lost frames:
// at least one event if any frame was lost, at most one per frame, and one in every
// interval between samples in which the chip lost frames while cand could read
// it, or within reportLag samples after (after the chip was back, if it was not).
func overflowProblems(lost, events uint64, samples []overflowSample) []string {
	var bad []string
	if lost > 0 && events == 0 {
		bad = append(bad, fmt.Sprintf("RX: the chip lost %d frames, cand reported no overflow", lost))
	}
	if events > lost {
		bad = append(bad, fmt.Sprintf("RX: %d overflow events reported, the chip lost only %d frames", events, lost))
	}
	for k := 1; k < len(samples); k++ {
		if samples[k].lost == samples[k-1].lost {
			continue
		}
		up := k
		for up < len(samples) && !samples[up].chipUp {
			up++
		}
		last := min(up+reportLag, len(samples)-1)
		if samples[last].events == samples[k-1].events {
			bad = append(bad, fmt.Sprintf("RX: the chip lost %d frames between samples %d and %d (of %d, every %v), cand reported no overflow by sample %d",
				samples[k].lost-samples[k-1].lost, k-1, k, len(samples), sampleEvery, last))
			break
		}
	}
	return bad
}

// sequenceProblems checks the frames read of each periodic or load peer (reorders up
// to uncertain, the reads cand counted as of unknown order, are reported ones): counters
// in order (modulo their width for dlc < 8), none twice, payloads that match.
func sequenceProblems(peers []config.SimPeer, read []can.Frame, uncertain uint64) []string {
	type key struct {
		ext bool
		id  uint32
	}
	owner := map[key]int{}
	for pi, p := range peers {
		if p.Kind != config.PeerPeriodic && p.Kind != config.PeerLoad {
			continue
		}
		for _, id := range p.IDs {
			if _, dup := owner[key{p.Extended, id}]; !dup {
				owner[key{p.Extended, id}] = pi
			}
		}
	}
	last := map[int]*seqcheck.Last{}
	var bad, reordered []string
	for n, f := range read {
		pi, ok := owner[key{f.IsExtended, f.ID}]
		if !ok || f.IsRemote || f.Length == 0 {
			continue
		}
		c, ok := canbus.Counter(f)
		if !ok || f.Data != canbus.Payload(c, f.Length) {
			bad = append(bad, fmt.Sprintf("RX: frame %d from peer %s is corrupt: %v", n, peers[pi].Name, f))
			continue
		}
		bits := uint(64)
		if f.Length < 8 {
			bits = 8 * uint(min(f.Length, 4))
		}
		if last[pi] == nil {
			last[pi] = &seqcheck.Last{}
		}
		switch step, prev := last[pi].Note(c, bits); step {
		case seqcheck.Repeat:
			bad = append(bad, fmt.Sprintf("RX: frame %d from peer %s repeats counter %d", n, peers[pi].Name, c))
		case seqcheck.Back:
			reordered = append(reordered, fmt.Sprintf("RX: frame %d from peer %s has counter %d after %d: out of order", n, peers[pi].Name, c, prev))
		}
		if len(bad) > 10 {
			break
		}
	}
	// With both RX buffers full the chip keeps no record of which filled first:
	// cand counts each such read (cand_rx_order_uncertain_total, mcp2515/rxorder.go)
	// and a swap is reported, not silent, as long as there are no more of them.
	if uint64(len(reordered)) > uncertain {
		bad = append(bad, fmt.Sprintf("%d frames out of order, %d reads counted as of unknown order", len(reordered), uncertain))
		bad = append(bad, reordered[:min(len(reordered), 10)]...)
	}
	return bad
}
