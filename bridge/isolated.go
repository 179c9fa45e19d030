package bridge

// An isolated frame — the first after the delivery thread has parked — is the
// owner's to write. Waking the parked thread costs the owner a system call and
// the frame a wake-up of another core (tens of µs on a Pi: its context switch
// round trip, docs/boards.md) before its own write; the owner's write of one
// frame costs one socket write, after the drain, with the chip empty. Under load
// the thread does not park (it spins SpinNs after its last frame), and the owner
// writes nothing: it writes only
//   - one published record, the ring's only one, with INT not asserted (no
//     frame waiting in the chip meanwhile: the next one is at least one frame
//     time away, and RXB0 and RXB1 are both free);
//   - at least SpinNs after its previous one (the thread would still be spinning
//     had it written that one, so a second frame that soon is a burst's: the
//     thread is woken for it, and for the rest of the burst it spins);
//   - with the thread parked (on the virtual Pi, its board core parked too: a
//     core still spinning in the board's time takes the frame itself).
// The thread is kept off the rings meanwhile (state dtOwner), so frames reach
// the socket in ring order whoever writes them.

// writeIsolated writes the ring's only record on the owner thread when it is an
// isolated frame, and reports whether it did (false: the caller wakes the
// thread). Owner thread, after a drain, with the ring published.
func (d *Delivery) writeIsolated(p *Port) bool {
	if p.ring.waiting() != 1 || !d.parked() {
		return false
	}
	now := d.Clock.Now()
	if now-d.ownerAt < d.SpinNs || d.spinning() || p.intr.Asserted() {
		return false
	}
	if !d.state.CompareAndSwap(dtParked, dtOwner) {
		return false // the thread took the rings back
	}
	if e := p.ring.peek(); e != nil {
		if err := p.write(e, p.kernel, p.clock); err != nil {
			p.writeErr(err)
		}
		p.ring.pop()
		d.stats.isolated.Add(1)
	}
	d.ownerAt = now
	d.state.Store(dtParked)
	return true
}
