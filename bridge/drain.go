package bridge

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"cand/socketcan"
)

// On the way out (SIGTERM) no frame may go missing unseen. The frames in the TX
// buffers get drainWait to go out; then each controller leaves the bus (leaveBus:
// what is still pending is aborted, and what it received meanwhile is written to
// the socket), and a frame the chip never released is counted as dropped. The
// frames still waiting in each socket's queue are read out and counted as unsent
// (cand_tx_unsent_at_exit_total, and a log line with their number); then the
// controller's interrupts are disabled (Controller.Stop).
const (
	drainWait  = int64(100 * time.Millisecond)
	unsentMost = 1 << 20 // records read out of one socket queue at most
)

// drain runs once the loop has stopped, on the owner thread. It returns the first
// error of a controller that could not leave the bus.
func (o *Owner) drain() error {
	var live []*Port
	for _, p := range o.Ports {
		if p.bridging() && !p.busOff {
			live = append(live, p)
		}
	}
	o.finishTX(live, o.Clock.Now()+drainWait)
	var err error
	for _, p := range o.Ports {
		if fd := p.newSock.Swap(0); fd > 0 {
			unix.Close(int(fd - 1)) // handed over, never put in place
		}
		chip := !p.down && !p.failed // a chip to talk to, not stopped yet
		if chip && p.linkHave == LinkUp && !p.held {
			p.leaveBus()
		}
		if n := p.pending(); n > 0 {
			p.log("frames the chip did not release at exit: counted as dropped", p.linkArgs("frames", n)...)
			p.dropPending()
		}
		p.deliverAll()
		p.countUnsent()
		if !chip {
			continue
		}
		if serr := p.Ctl.Stop(); serr != nil && err == nil {
			err = fmt.Errorf("%s: leaving the bus: %w", p.Name, serr)
		}
	}
	return err
}

// finishTX services the live ports' interrupts, without reading their sockets,
// until no frame is pending in their TX buffers or deadline passes. Each look is
// a GPIO register read; the wait is bounded.
func (o *Owner) finishTX(live []*Port, deadline int64) {
	for o.Clock.Now() < deadline {
		pending := false
		for _, p := range live {
			if p.pending() == 0 {
				continue
			}
			pending = true
			if p.gate.line.Asserted() {
				if _, err := p.Ctl.HandleInterrupt(p); err != nil {
					return
				}
			}
		}
		if !pending {
			return
		}
	}
}

// pending is the number of frames loaded into TX buffers and not yet reported
// sent or failed.
func (p *Port) pending() int {
	n := 0
	for _, t := range p.txReadNs {
		if t != 0 {
			n++
		}
	}
	return n
}

// dropPending counts the frames loaded into TX buffers and not reported sent as
// dropped, and forgets them: the next RESET (or the exit) takes them.
func (p *Port) dropPending() {
	if n := p.pending(); n > 0 {
		p.M.TXDropped.Add(uint64(n))
	}
	p.txReadNs = [3]int64{}
}

// countUnsent reads out what still waits in the socket's queue, without sending
// it, and counts and logs it. The kernel's drop count for the queue (SO_RXQ_OVFL)
// comes with the records and is counted as ever.
func (p *Port) countUnsent() {
	n := uint64(0)
	for ; n < unsentMost; n++ {
		if _, err := socketcan.ReadFrame(p.sockFd, &p.txBuf, &p.drops); err != nil && classify(err) != sockFrame {
			break
		}
	}
	if p.drops != p.lastDrops {
		p.M.SocketDrops.Add(uint64(p.drops - p.lastDrops))
		p.lastDrops = p.drops
	}
	p.M.TXUnsentAtExit.Add(n)
	if n > 0 {
		p.log("frames left unsent in the socket queue at exit", p.linkArgs("frames", n)...)
	}
}
