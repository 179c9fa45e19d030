package canbus

import (
	"fmt"

	"go.einride.tech/can"
)

// PayloadKind chooses a periodic or load peer's data bytes.
type PayloadKind uint8

const (
	PayloadCounter  PayloadKind = iota // Payload(n, dlc): the frame's counter
	PayloadStuffMin                    // StuffedData(frame, false): the fewest stuff bits, the same every time
	PayloadStuffMax                    // StuffedData(frame, true): the most stuff bits, the same every time
)

var payloadNames = [...]string{"counter", "stuff-min", "stuff-max"}

func (k PayloadKind) String() string {
	if int(k) < len(payloadNames) {
		return payloadNames[k]
	}
	return fmt.Sprintf("PayloadKind(%d)", uint8(k))
}

// shape is what a sending peer puts in the frame of each of its IDs.
type shape struct {
	dlc   []uint8     // per ID
	fixed []can.Data  // per ID, for the stuffing payloads
	index map[key]int // the place of each ID in IDs
	mods  []uint64    // per ID: the counter's modulus in the data (Seq), 0 = whole, 1 = none
	seqID bool        // the ID's place tells the counter modulo len(IDs)
}

type key struct {
	id  uint32
	ext bool
}

// shapeFrames checks the frame options of p's spec and precomputes each ID's
// frame layout.
func (p *Peer) shapeFrames() error {
	c := &p.spec
	sends := c.Kind == PeerPeriodic || c.Kind == PeerLoad
	if !sends {
		if len(c.DLCs) > 0 || c.Remote || c.Payload != PayloadCounter {
			return fmt.Errorf("sim peer %q: dlcs, remote and payload shape the frames of periodic and load peers; %s peers send none of their own", c.Name, c.Kind)
		}
		return nil
	}
	if len(c.DLCs) > 0 && len(c.DLCs) != len(c.IDs) {
		return fmt.Errorf("sim peer %q: %d dlcs for %d ids: give one data length per id", c.Name, len(c.DLCs), len(c.IDs))
	}
	if int(c.Payload) >= len(payloadNames) {
		return fmt.Errorf("sim peer %q: unknown payload %v: use counter, stuff-min or stuff-max", c.Name, c.Payload)
	}
	if c.Remote && c.Payload != PayloadCounter {
		return fmt.Errorf("sim peer %q: payload %v with remote frames: remote frames carry no data", c.Name, c.Payload)
	}
	s := shape{dlc: make([]uint8, len(c.IDs)), mods: make([]uint64, len(c.IDs)), index: make(map[key]int, len(c.IDs))}
	for i, id := range c.IDs {
		s.dlc[i] = p.dlc
		if len(c.DLCs) > 0 {
			if c.DLCs[i] > 8 {
				return fmt.Errorf("sim peer %q: dlcs[%d] %d is out of range: use 0..8", c.Name, i, c.DLCs[i])
			}
			s.dlc[i] = c.DLCs[i]
		}
		if _, dup := s.index[key{id, c.Extended}]; !dup {
			s.index[key{id, c.Extended}] = i
		}
		switch d := s.dlc[i]; {
		case c.Remote || d == 0 || c.Payload != PayloadCounter:
			s.mods[i] = 1
		case d < 8:
			s.mods[i] = 1 << (8 * uint(min(d, 4)))
		}
	}
	s.seqID = len(s.index) == len(c.IDs) && len(c.IDs) > 1
	if c.Payload != PayloadCounter {
		s.fixed = make([]can.Data, len(c.IDs))
		for i, id := range c.IDs {
			f := can.Frame{ID: id, IsExtended: c.Extended, Length: s.dlc[i]}
			s.fixed[i] = StuffedData(f, c.Payload == PayloadStuffMax)
		}
	}
	p.shape = s
	return nil
}

// frame is the peer's n-th frame, of its i-th ID.
func (p *Peer) frame(i int, n uint64) can.Frame {
	dlc := p.shape.dlc[i]
	f := can.Frame{ID: p.spec.IDs[i], Length: dlc, IsExtended: p.spec.Extended, IsRemote: p.spec.Remote}
	switch {
	case f.IsRemote:
	case p.shape.fixed != nil:
		f.Data = p.shape.fixed[i]
	default:
		f.Data = Payload(n, dlc)
	}
	return f
}

// Seq tells where frame f stands in the peer's stream of frames: its counter n
// (the peer's frames count from 0 over all its IDs, in the order it sends them)
// modulo mod, or the whole counter when mod is 0. The data carries it (the
// counter payload with dlc ≥ 1: the whole counter at dlc 8, its low 8·dlc bits at
// dlc 1..3, its low 32 bits at dlc 4..7); when the peer sends two or more distinct
// IDs in turn, the ID's place in IDs gives it modulo len(IDs), alone for frames
// without a counter in the data, or combined with a data counter whose modulus is
// coprime with len(IDs) (the Chinese remainder theorem: 1-byte counters and 251
// IDs make n modulo 64256). ok is false for a frame that is not one the peer
// sends, or that carries neither.
func (p *Peer) Seq(f can.Frame) (n, mod uint64, ok bool) {
	i, mine := p.shape.index[key{f.ID, f.IsExtended}]
	if !mine || f.IsRemote != p.spec.Remote || f.Length != p.shape.dlc[i] {
		return 0, 0, false
	}
	if m := p.shape.mods[i]; m != 1 {
		c, ok := Counter(f)
		if !ok {
			return 0, 0, false
		}
		if l := uint64(len(p.spec.IDs)); m != 0 && p.shape.seqID && gcd(m, l) == 1 {
			return crt(c, m, uint64(i), l), m * l, true
		}
		return c, m, true
	}
	if p.shape.fixed != nil && f.Data != p.shape.fixed[i] {
		return 0, 0, false
	}
	if p.shape.seqID {
		return uint64(i), uint64(len(p.spec.IDs)), true
	}
	return 0, 0, false
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// crt is the x < m1·m2 with x ≡ a (mod m1) and x ≡ b (mod m2), m1 and m2
// coprime: x = a + m1·k with k = (b − a)·m1⁻¹ (mod m2).
func crt(a, m1, b, m2 uint64) uint64 {
	// m1⁻¹ mod m2 by the extended Euclidean algorithm.
	t, nt, r, nr := int64(0), int64(1), int64(m2), int64(m1%m2)
	for nr != 0 {
		q := r / nr
		t, nt = nt, t-q*nt
		r, nr = nr, r-q*nr
	}
	inv := uint64((t%int64(m2) + int64(m2)) % int64(m2))
	k := ((b%m2 + m2 - a%m2) % m2) * inv % m2
	return a + m1*k
}

// Sends reports whether the peer sends frames with this ID and format.
func (p *Peer) Sends(id uint32, extended bool) bool {
	_, ok := p.shape.index[key{id, extended}]
	return ok
}

// SentNow is Stats().Sent without taking the lock: frames the peer completed so
// far, for a reader that must not hold up the bus.
func (p *Peer) SentNow() uint64 { return p.sent.Load() }

// destroyNext makes the next frame to start at or after at hit by a bit error
// (InjectErrors for one more frame). Lock held.
func (b *Bus) destroyNext(at int64) {
	if b.errLeft == 0 {
		b.errFrom = at
	}
	b.errLeft++
}
