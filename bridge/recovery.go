package bridge

import (
	"time"

	"cand/internal/mono"
	"cand/mcp2515"
	"cand/socketcan"
)

const (
	healthEvery = int64(time.Second)
	backoffMin  = int64(100 * time.Millisecond)
	backoffMax  = int64(10 * time.Second)
)

// enterBusOff counts a bus-off and schedules the restart (restart_ms), or leaves it
// to Owner.Restart.
func (p *Port) enterBusOff() {
	p.M.BusOffs.Inc()
	p.busOff = true
	if p.restartNs > 0 {
		p.restartAt = mono.Now() + p.restartNs
	}
}

// afterInterrupt acts on what the interrupt reported: a chip that reset itself is
// programmed again, and a controller that went bus-off is held off the bus.
func (p *Port) afterInterrupt() error {
	if p.needReinit {
		// The chip reset itself (CNF/CANINTE lost): program it again.
		p.needReinit = false
		p.chipLost(mcp2515.ErrChipReset)
		return nil
	}
	if p.busOff && !p.held {
		// Hold the controller off the bus until the restart: Configuration mode
		// stops the MCP2515's automatic recovery after 128 × 11 recessive bits
		// (MCP2515 datasheet DS20001801J §6.6).
		p.held = true
		return p.Ctl.Stop()
	}
	return nil
}

// recover is the port's recovery in one loop turn: the chip-health check (or a down
// port's retry) when due, and the bus-off restart when due or asked for (manual).
// It returns timeout (ms) shortened to the next recovery deadline, and whether the
// port is on the bus and bridging this turn.
func (p *Port) recover(manual bool, timeout int) (int, bool) {
	if next := p.health(mono.Now()); next != 0 {
		timeout = min(timeout, max(int((next-mono.Now())/1e6)+1, 1))
	}
	if p.down {
		return timeout, false
	}
	if p.busOff {
		if now := mono.Now(); manual || (p.restartAt != 0 && now >= p.restartAt) {
			if !p.restartOrDown(true) {
				return timeout, false
			}
		} else if p.restartAt != 0 {
			timeout = min(timeout, int((p.restartAt-now)/1e6)+1)
		}
	}
	return timeout, true
}

// restart re-initialises the controller (RESET clears TEC/REC: error-active) after
// bus-off or a chip reset. Frames that were loaded and not sent are dropped and
// counted; frames still in the socket queue go out afterwards. announce sends
// CAN_ERR_RESTARTED, as the kernel does after a bus-off restart.
func (p *Port) restart(announce bool) error {
	if n := p.Ctl.Pending(); n > 0 {
		p.M.TXDropped.Add(uint64(n))
	}
	p.txReadNs = [3]int64{}
	if err := p.Ctl.Init(); err != nil {
		return err
	}
	p.busOff, p.held, p.restartAt = false, false, 0
	p.M.BusState.Set(int64(mcp2515.StateErrorActive))
	p.M.TEC.Set(0)
	p.M.REC.Set(0)
	if announce {
		p.sendError(&socketcan.ErrorFrame{Class: socketcan.CAN_ERR_RESTARTED})
	}
	return nil
}

// health runs the idle-time chip check when it is due and returns when the next is.
func (p *Port) health(now int64) int64 {
	if p.down {
		if now >= p.retryAt {
			p.retry()
		}
		return p.retryAt
	}
	if p.busOff || now < p.healthAt {
		return p.healthAt
	}
	p.healthAt = now + healthEvery
	if err := p.Ctl.Check(); err != nil {
		p.chipLost(err)
	}
	return p.healthAt
}

// chipLost counts and logs a chip that reset itself or stopped answering, and
// re-initialises it; if that fails the port goes down and retries with back-off.
// Frames from the socket wait meanwhile (the socket queue is the buffer).
func (p *Port) chipLost(why error) {
	p.M.ChipResets.Inc()
	p.log("chip lost; re-initialising", "controller", p.Name, "cause", why.Error())
	if p.restartOrDown(false) {
		p.log("chip re-initialised", "controller", p.Name)
	}
}

// restartOrDown restarts the controller; if the chip does not answer, the port goes
// down and is retried with back-off instead of stopping cand. It reports success.
func (p *Port) restartOrDown(announce bool) bool {
	if err := p.restart(announce); err != nil {
		p.down = true
		p.backoff = backoffMin
		p.retryAt = mono.Now() + p.backoff
		p.log("chip does not answer; retrying with back-off", "controller", p.Name, "err", err.Error())
		return false
	}
	return true
}

// retry re-initialises a down port's chip; while it does not answer, the back-off
// doubles up to backoffMax.
func (p *Port) retry() {
	if err := p.restart(false); err != nil {
		p.backoff = min(2*p.backoff, backoffMax)
		p.retryAt = mono.Now() + p.backoff
		return
	}
	p.down = false
	p.healthAt = mono.Now() + healthEvery
	p.log("chip back; bridging again", "controller", p.Name)
}
