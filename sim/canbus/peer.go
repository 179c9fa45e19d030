package canbus

import (
	"fmt"
	"sync/atomic"
	"time"

	"go.einride.tech/can"
)

// LogSize is the number of frames a peer's log keeps (a ring: the newest win).
const LogSize = 1 << 16

// txQueueLen bounds a peer's transmit queue; frames beyond it are dropped (counted).
const txQueueLen = 64

// Record is one frame a peer sent or received, with the time of its end of EOF.
type Record struct {
	Frame can.Frame
	At    int64
	Sent  bool
}

// PeerStats are a peer's counters.
type PeerStats struct {
	Sent, Received     uint64
	TxErrors, RxErrors uint64
	ArbLost            uint64
	Dropped            uint64 // frames not queued because the TX queue was full
}

// PeerKind selects a peer's behaviour (see Peer).
type PeerKind uint8

const (
	PeerPeriodic PeerKind = iota + 1 // sends frames with a counter every Period
	PeerAnswer                       // answers each received data frame: same data, ID + IDOffset
	PeerLoad                         // keeps the bus busy LoadPercent of the time
	PeerErrors                       // destroys the next frame to start every Period (peeropts.go)
)

var peerKindNames = [...]string{"", "periodic", "answer", "load", "errors"}

func (k PeerKind) String() string {
	if k > 0 && int(k) < len(peerKindNames) {
		return peerKindNames[k]
	}
	return fmt.Sprintf("PeerKind(%d)", uint8(k))
}

// PeerSpec describes one peer. Zero fields take the defaults below.
type PeerSpec struct {
	Kind     PeerKind
	Name     string
	IDs      []uint32      // periodic/load: IDs sent in turn, at least one
	Extended bool          // periodic/load: IDs are 29-bit, else 11-bit
	Period   time.Duration // periodic/errors: default 100ms, not negative
	DLC      *uint8        // periodic/load: 0..8, nil: 8
	IDOffset uint32        // answer: added to the received ID, 0: 1
	// LoadPercent is a load peer's share of bus time, 1..100.
	LoadPercent float64
	// DLCs gives each ID its own data length (periodic/load: one per ID, 0..8),
	// instead of DLC.
	DLCs []uint8
	// Remote sends remote frames (periodic/load): RTR, the DLC as given, no data.
	Remote bool
	// Payload chooses the data (periodic/load data frames): the counter (default)
	// or the least or most bit stuffing (peeropts.go).
	Payload PayloadKind
}

// Peer is a simulated CAN node built from a PeerSpec:
//   - periodic: every Period it queues one frame, the IDs in turn, data = Payload(n, DLC);
//   - answer: each received data frame is answered with the same IDE, DLC and data and
//     ID + IDOffset (wrapping within 11 or 29 bits); remote frames are not answered;
//   - load: keeps one frame of the IDs in turn (data = Payload) pending so the bus is
//     busy LoadPercent of the time: after each frame of b bits it waits
//     b·(100−p)/p bit times; at 100 % a new frame is pending at once, so only the
//     3-bit intermission separates frames;
//   - errors: sends nothing; every Period the next frame to start on the bus is
//     destroyed by a bit error after its control field and an error frame follows
//     (a node whose receiver flags frames it should not).
//
// DLCs, Remote and Payload shape a periodic or load peer's frames (peeropts.go).
//
// A peer always ACKs, stays error-active (it counts errors but has no TEC/REC) and
// retransmits until it succeeds.
type Peer struct {
	bus      *Bus
	spec     PeerSpec
	dlc      uint8
	period   int64
	idOffset uint32

	q      [txQueueLen]can.Frame
	qh, qn int
	nextID int
	n      uint64        // payload counter
	shape  shape         // per-ID data lengths and fixed payloads (peeropts.go)
	sent   atomic.Uint64 // st.Sent, for readers without the lock (SentNow)
	timer  *Timer
	start  bool

	st   PeerStats
	log  []Record
	logN uint64
}

var _ Node = (*Peer)(nil)

// NewPeer builds a peer from c and attaches it to b; Start begins its traffic.
func NewPeer(b *Bus, c PeerSpec) (*Peer, error) {
	p := &Peer{bus: b, spec: c, dlc: 8, idOffset: c.IDOffset, period: int64(c.Period)}
	if c.DLC != nil {
		if *c.DLC > 8 {
			return nil, fmt.Errorf("sim peer %q: dlc %d is out of range: use 0..8", c.Name, *c.DLC)
		}
		p.dlc = *c.DLC
	}
	switch c.Kind {
	case PeerPeriodic, PeerErrors:
		if p.period == 0 {
			p.period = int64(100 * time.Millisecond)
		}
		if p.period < 0 {
			return nil, fmt.Errorf("sim peer %q: period %v is negative: use a positive duration", c.Name, c.Period)
		}
	case PeerAnswer:
		if p.idOffset == 0 {
			p.idOffset = 1
		}
	case PeerLoad:
		if c.LoadPercent <= 0 || c.LoadPercent > 100 {
			return nil, fmt.Errorf("sim peer %q: load_percent %v is out of range: use 1..100", c.Name, c.LoadPercent)
		}
	default:
		return nil, fmt.Errorf("sim peer %q: unknown kind %q: use periodic, answer, load or errors", c.Name, c.Kind)
	}
	if c.Kind != PeerAnswer && c.Kind != PeerErrors && len(c.IDs) == 0 {
		return nil, fmt.Errorf("sim peer %q: kind %s needs at least one id in ids", c.Name, c.Kind)
	}
	max := uint32(can.MaxID)
	if c.Extended {
		max = can.MaxExtendedID
	}
	for _, id := range c.IDs {
		if id > max {
			return nil, fmt.Errorf("sim peer %q: id %#x does not fit the frame format (max %#x): set extended: true or use a smaller id", c.Name, id, max)
		}
	}
	if err := p.shapeFrames(); err != nil {
		return nil, err
	}
	p.log = make([]Record, LogSize)
	p.timer = NewTimer(p.tick)
	b.Attach(p)
	return p, nil
}

// Name is the peer's name (PeerSpec.Name).
func (p *Peer) Name() string { return p.spec.Name }

// Start begins the peer's own traffic at time at (periodic: first frame at at; load:
// first frame pending at at). It takes the lock.
func (p *Peer) Start(at int64) {
	p.bus.Lock()
	defer p.bus.Unlock()
	if p.start {
		return
	}
	p.start = true
	if p.spec.Kind == PeerPeriodic || p.spec.Kind == PeerLoad || p.spec.Kind == PeerErrors {
		p.bus.Schedule(p.timer, at)
	}
}

// Stats returns the peer's counters. It takes the lock.
func (p *Peer) Stats() PeerStats {
	p.bus.Lock()
	defer p.bus.Unlock()
	return p.st
}

// Log returns the logged frames, oldest first (at most LogSize). It takes the lock
// and allocates.
func (p *Peer) Log() []Record {
	p.bus.Lock()
	defer p.bus.Unlock()
	n := p.logN
	if n > LogSize {
		n = LogSize
	}
	out := make([]Record, 0, n)
	for i := p.logN - n; i < p.logN; i++ {
		out = append(out, p.log[i%LogSize])
	}
	return out
}

// Received returns the logged received frames, oldest first. It takes the lock.
func (p *Peer) Received() []Record {
	all := p.Log()
	out := all[:0]
	for _, r := range all {
		if !r.Sent {
			out = append(out, r)
		}
	}
	return out
}

// Send queues f for transmission now (a test hook). It takes the lock.
func (p *Peer) Send(f can.Frame) bool {
	p.bus.Lock()
	defer p.bus.Unlock()
	return p.enqueue(f, p.bus.now)
}

func (p *Peer) record(f can.Frame, at int64, sent bool) {
	p.log[p.logN%LogSize] = Record{Frame: f, At: at, Sent: sent}
	p.logN++
}

func (p *Peer) enqueue(f can.Frame, at int64) bool {
	if p.qn == txQueueLen {
		p.st.Dropped++
		return false
	}
	p.q[(p.qh+p.qn)%txQueueLen] = f
	p.qn++
	p.bus.Kick(at)
	return true
}

// generate builds the next own frame (periodic, load).
func (p *Peer) generate() can.Frame {
	f := p.frame(p.nextID%len(p.spec.IDs), p.n)
	p.nextID++
	p.n++
	return f
}

func (p *Peer) tick(at int64) {
	if p.spec.Kind == PeerErrors {
		p.bus.destroyNext(at)
	} else {
		p.enqueue(p.generate(), at)
	}
	if p.spec.Kind == PeerPeriodic || p.spec.Kind == PeerErrors {
		p.bus.Schedule(p.timer, at+p.period)
	}
}

func (p *Peer) Pending(at int64) (can.Frame, bool) {
	if p.qn == 0 {
		return can.Frame{}, false
	}
	return p.q[p.qh], true
}

func (p *Peer) TxStart(at int64) {}

func (p *Peer) TxLost(at int64) { p.st.ArbLost++ }

func (p *Peer) TxDone(at int64) {
	f := p.q[p.qh]
	p.qh = (p.qh + 1) % txQueueLen
	p.qn--
	p.st.Sent++
	p.sent.Store(p.st.Sent)
	p.record(f, at, true)
	if p.spec.Kind == PeerLoad {
		pct := p.spec.LoadPercent
		if pct >= 100 {
			p.enqueue(p.generate(), at)
			return
		}
		gap := int64(float64(FrameBits(f)) * (100 - pct) / pct)
		p.bus.Schedule(p.timer, at+p.bus.Bits(ifsBits)+p.bus.Bits(int(gap)))
	}
}

func (p *Peer) TxError(e ErrorKind, at int64) { p.st.TxErrors++ }

func (p *Peer) Receive(f can.Frame, at int64) {
	p.st.Received++
	p.record(f, at, false)
	if p.spec.Kind == PeerAnswer && !f.IsRemote {
		r := f
		if r.IsExtended {
			r.ID = (r.ID + p.idOffset) & can.MaxExtendedID
		} else {
			r.ID = (r.ID + p.idOffset) & can.MaxID
		}
		p.enqueue(r, at)
	}
}

func (p *Peer) RxError(e ErrorKind, at int64) { p.st.RxErrors++ }

// Acks implements Node: a peer always acknowledges.
func (p *Peer) Acks(at int64) bool { return true }
