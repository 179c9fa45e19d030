package bridge

import (
	"time"

	"cand/internal/mono"
	"cand/mcp2515"
)

// An INT line stuck low with no flag set in the chip (a short, a wrong int_gpio on
// a line something else holds low) would have the owner thread service it without
// end: every HandleInterrupt runs its maxPasses passes of READ STATUS and the error
// pass, finds nothing, and the level check sends it back at once. After stormAfter
// such interrupts in a row the port stops trusting the line: it polls the chip
// every stormPoll instead (mcp2515.Controller.Poll, 2 transfers when nothing is
// flagged), and services interrupts again once the line is released. While the
// line is stuck, received frames wait up to stormPoll in the chip: at more than two
// frames per stormPoll it overflows, which is reported and counted as ever.
const (
	stormAfter = 4
	stormPoll  = int64(10 * time.Millisecond)
)

// intGate is the INT level as the loop sees it (Port.intr): hidden while the port
// is not bridging; while the line is stuck (storm), asserted only when the next
// poll is due.
type intGate struct {
	line   mcp2515.IntLine
	clock  mono.Clock // the port's
	masked bool
	storm  bool
	pollAt int64 // storm: when the next poll is due
}

var _ mcp2515.IntLine = (*intGate)(nil)

func (g *intGate) Asserted() bool {
	if g.masked || (g.storm && g.clock.Now() < g.pollAt) {
		return false
	}
	return g.line.Asserted()
}

// service handles one interrupt: HandleInterrupt, or, while INT is stuck, one
// Poll. It watches for the storm: an interrupt that ended with INT still low after
// a pass that found nothing to do (mcp2515.Stats.SpuriousInterrupts) is idle.
func (p *Port) service() (done bool, err error) {
	if p.storm {
		p.gate.pollAt = p.clock.Now() + stormPoll
		return true, p.Ctl.Poll(p)
	}
	spurious := p.Ctl.Stats().SpuriousInterrupts
	done, err = p.Ctl.HandleInterrupt(p)
	if err != nil {
		return done, err
	}
	if done || p.Ctl.Stats().SpuriousInterrupts == spurious {
		p.idle = 0
		return done, nil
	}
	if p.idle++; p.idle >= stormAfter {
		// done stays false: the loop comes back soon, and from then on waits for
		// the polls (stormTimeout).
		p.enterStorm()
	}
	return done, nil
}

func (p *Port) enterStorm() {
	p.storm = true
	p.gate.pollAt = p.clock.Now() + stormPoll
	p.M.IntStorms.Inc()
	p.updateGate()
	p.log("INT stuck low with no interrupt flag set (a wiring fault, or int_gpio names the wrong line?): polling the chip every "+
		time.Duration(stormPoll).String()+" until the line is released", "controller", p.Name, "interrupts", stormAfter)
}

// stormTimeout ends the storm once the line is released and shortens timeout (ms)
// to the next poll while it lasts.
func (p *Port) stormTimeout(timeout int) int {
	if !p.storm {
		return timeout
	}
	if !p.gate.line.Asserted() {
		p.storm, p.idle = false, 0
		p.updateGate()
		p.info("INT line released: interrupts serviced again", "controller", p.Name)
		return timeout
	}
	return min(timeout, max(int((p.gate.pollAt-p.clock.Now())/1e6)+1, 1))
}
