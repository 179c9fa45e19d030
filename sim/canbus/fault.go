package canbus

// Fault injection. Each call takes the lock. Times are the bus's clock: take
// "now" as Bus.Clock().Reach(), not mono.Now() (on a virtual Pi with a bound CPU
// the two differ by the host stalls removed) nor Clock().Now() (a later removal
// could put that time in the bus's future).
//
// Simplifications (ISO 11898-1 §12.1.4 counting rules otherwise apply in the nodes):
//   - Error flags are 6 bits (no superposition of other nodes' flags up to 12 bits);
//     an error frame is flag 6 + delimiter 8, then the 3-bit intermission.
//   - An error-passive transmitter's 8-bit suspend-transmission time is not modelled.
//   - Arbitration loss is reported at the SOF instant, not at the losing bit.

// InjectErrors destroys the next n frames that start at or after at: each is hit by
// a bit error right after its control field, seen by every node (the transmitter
// gets BitError, the receivers BitError), and an error frame follows.
func (b *Bus) InjectErrors(at int64, n int) {
	b.mu.Lock()
	defer b.Unlock()
	b.errFrom, b.errLeft = at, n
}

// NoAck makes every frame whose ACK slot falls in [from, until) unacknowledged: the
// transmitter gets AckError (error-passive transmitters don't count it, per the ISO
// exception, in the node), the other nodes see its error flag as a FormError.
func (b *Bus) NoAck(from, until int64) {
	b.mu.Lock()
	defer b.Unlock()
	b.noAckFrom, b.noAckTo = from, until
}

// StuckDominant holds the bus dominant during [from, until): a frame in progress is
// destroyed (transmitter BitError, receivers BitError); then, after the 14th dominant
// bit and every 8 dominant bits after it, every node with a pending frame counts as a
// transmitter (TxStart then TxError(DominantBits): TEC+8) and every other node as a
// receiver (RxError(DominantBits): REC+8). Simplification: on a real bus a node that
// has not started its SOF stays a receiver; here pending nodes count as transmitters
// so that their TEC climbs to bus-off, the behaviour the fault is for. No frame can
// start until 11 recessive bits after until.
func (b *Bus) StuckDominant(from, until int64) {
	b.mu.Lock()
	defer b.Unlock()
	b.stuckUntil = until
	b.Schedule(b.stuckOn, from)
}

// EndStuck ends the StuckDominant fault at at (not before the bus's now) instead of
// its until: for a fault held until a test or a soak says it is over.
func (b *Bus) EndStuck(at int64) {
	b.mu.Lock()
	defer b.Unlock()
	b.stuckUntil = at
	if b.stuck {
		b.Schedule(b.stuckOff, at)
	}
}

func (b *Bus) stuckStart(at int64) {
	if b.bitrate == 0 {
		return
	}
	if b.ack.Armed() || b.eof.Armed() || b.errT.Armed() {
		b.Cancel(b.ack)
		b.Cancel(b.eof)
		b.Cancel(b.errT)
		b.destroy(BitError, BitError, at)
		b.stats.BusyNs += at - b.cur.sof
		b.cur.tx = -1
	}
	b.Cancel(b.sof)
	b.goDominant(at)
	b.stuck, b.busy = true, true
	b.emit(Event{Kind: EvStuck, At: at, From: -1})
	b.Schedule(b.stuckTick, at+b.Bits(14))
	b.Schedule(b.stuckOff, b.stuckUntil)
}

func (b *Bus) stuckBits(at int64) {
	for i := range b.nodes {
		n := b.nodes[i].n
		if _, ok := n.Pending(at); ok {
			n.TxStart(at)
			n.TxError(DominantBits, at)
		} else {
			n.RxError(DominantBits, at)
		}
	}
	b.stats.Errors++
	b.Schedule(b.stuckTick, at+b.Bits(8))
}

func (b *Bus) stuckEnd(at int64) {
	b.Cancel(b.stuckTick)
	b.stuck = false
	b.goRecessive(at)
	b.emit(Event{Kind: EvRelease, At: at, From: -1})
	b.idleAt = at + b.Bits(11)
	b.Schedule(b.sof, b.idleAt)
}
