package bridge

import (
	"cand/canstate"
	"errors"
	"time"

	"cand/mcp2515"
	"cand/socketcan"
)

const (
	healthEvery = int64(time.Second)
	backoffMin  = int64(100 * time.Millisecond)
	backoffMax  = int64(10 * time.Second)
	// Bus-off restarts are rate-limited, where the kernel has restart-ms alone
	// (drivers/net/can/dev/dev.c restarts every restart_ms, however often): a
	// bus-off less than restartWindow after the previous restart doubles the
	// delay, up to restartMax (or restart_ms, if longer); once the controller
	// stayed on the bus for restartWindow, the next delay is restart_ms again.
	restartWindow = int64(10 * time.Second)
	restartMax    = int64(10 * time.Second)
)

// Start programs the chip before the loop runs, on the owner thread. A chip that
// does not answer (missing, unpowered, MISO stuck) is not fatal: the port starts
// down, its interface served, and the chip is retried with back-off. It returns the
// chip's error, for the caller to report.
func (p *Port) Start() error {
	p.M.LinkUp.Set(1)
	if err := p.Ctl.Init(); err != nil {
		p.goDown()
		p.log("chip does not answer at start: its interface is served, and the chip retried with back-off", "controller", p.Name, "err", err.Error())
		return err
	}
	p.healthAt = p.clock.Now() + healthEvery
	p.M.ChipUp.Set(1)
	return nil
}

// enterBusOff counts a bus-off and schedules the restart (restart_ms, rate-limited),
// or leaves it to Owner.Restart.
func (p *Port) enterBusOff() {
	p.M.BusOffs.Inc()
	p.busOff = true
	if p.restartNs == 0 {
		return
	}
	now := p.clock.Now()
	delay := p.restartNs
	if p.restartedAt != 0 && now-p.restartedAt < restartWindow {
		delay = min(max(2*p.restartDelay, p.restartNs), max(restartMax, p.restartNs))
		if delay != p.restartDelay {
			p.log("bus-off again soon after the last restart: restart delayed", "controller", p.Name,
				"delay", time.Duration(delay).String(), "window", time.Duration(restartWindow).String())
		}
	}
	p.restartDelay = delay
	p.restartAt = now + delay
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
		// (MCP2515 datasheet DS20001801J §6.6). If it recovered before (this
		// thread was late), what it sent and received since is read now.
		p.held = true
		p.log("bus-off: controller held off the bus until its restart", p.linkArgs("restart", p.restartWhen())...)
		return p.Ctl.Hold(p)
	}
	return nil
}

// restartWhen says when a bus-off controller restarts: its delay, or "manual".
func (p *Port) restartWhen() string {
	if p.restartAt == 0 {
		return "manual"
	}
	return time.Duration(p.restartDelay).String()
}

// recover is the port's recovery in one loop turn: the interface's link state, the
// chip-health check (or a down port's retry) when due, the bus-off restart when due
// or asked for (manual), and a stuck INT line. It returns timeout (ms) shortened to
// the next recovery deadline, and whether the port is on the bus and bridging this
// turn.
func (p *Port) recover(manual bool, timeout int) (int, bool) {
	if p.failed || !p.followLink() {
		return timeout, false
	}
	if next := p.health(p.clock.Now()); next != 0 {
		timeout = min(timeout, max(int((next-p.clock.Now())/1e6)+1, 1))
	}
	if p.down {
		return timeout, false
	}
	if p.busOff {
		if now := p.clock.Now(); manual || (p.restartAt != 0 && now >= p.restartAt) {
			if !p.restartOrDown(true) {
				return timeout, false
			}
		} else if p.restartAt != 0 {
			timeout = min(timeout, int((p.restartAt-now)/1e6)+1)
		}
	}
	return p.stormTimeout(timeout), true
}

// restart re-initialises the controller (RESET clears TEC/REC: error-active) after
// bus-off, a chip reset or its interface coming back up. Frames that were loaded and
// not sent are dropped and counted; frames still in the socket queue go out
// afterwards. After bus-off it is counted (cand_restarts_total) and announced with
// CAN_ERR_RESTARTED, as the kernel does.
func (p *Port) restart(afterBusOff bool) error {
	p.dropPending()
	if err := p.Ctl.Init(); err != nil {
		return err
	}
	// Programmed afresh: a re-initialisation asked for before it (a reset found
	// while saveHeld read the chip) is done.
	p.busOff, p.held, p.restartAt, p.needReinit = false, false, 0, false
	p.M.BusState.Set(int64(canstate.ErrorActive))
	p.M.TEC.Set(0)
	p.M.REC.Set(0)
	p.M.ChipUp.Set(1)
	if afterBusOff {
		p.M.Restarts.Inc()
		p.restartedAt = p.clock.Now()
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
	p.M.ChipUp.Set(0) // until it is programmed again
	held := p.saveHeld()
	if errors.Is(why, mcp2515.ErrChipReset) && held != nil {
		// An interrupt's error pass read CNF/CANINTE changed, which a chip that
		// reset itself and a MISO line stuck at 0x00 both give; Check tells them
		// apart by CANCTRL.
		why = held
	}
	p.log("chip lost; re-initialising", "controller", p.Name, "cause", why.Error())
	if p.restartOrDown(false) {
		p.info("chip re-initialised", "controller", p.Name)
	}
}

// saveHeld reads what a chip that answers with its configuration intact holds
// before the RESET of a re-initialisation wipes it: such a chip stayed on the bus
// (its SPI wires were cut, or came back between the check that found it lost and
// now) and may hold frames and overflows. It is taken off the bus first, so that no
// frame arrives between this read and the RESET. It returns Check's verdict.
func (p *Port) saveHeld() error {
	err := p.Ctl.Check()
	if err == nil {
		p.leaveBus()
	}
	return err
}

// restartOrDown restarts the controller; if the chip does not answer, the port goes
// down and is retried with back-off instead of stopping cand. It reports success.
func (p *Port) restartOrDown(afterBusOff bool) bool {
	if err := p.restart(afterBusOff); err != nil {
		p.goDown()
		p.log("chip does not answer; retrying with back-off", "controller", p.Name, "err", err.Error())
		return false
	}
	return true
}

// goDown takes the port down until its chip answers again: retried from backoffMin.
func (p *Port) goDown() {
	p.down = true
	p.backoff = backoffMin
	p.retryAt = p.clock.Now() + p.backoff
	p.M.ChipUp.Set(0)
	p.updateGate()
}

// retry tries a down port's chip again; while it does not answer, the back-off
// doubles up to backoffMax. A chip still missing reads MISO stuck, which Check
// tells in one transfer, without RESET's 10 ms wait (the other ports on the bus are
// served meanwhile). A chip that kept its configuration (its SPI wires were only
// cut) is taken off the bus and read first (saveHeld).
func (p *Port) retry() {
	if errors.Is(p.saveHeld(), mcp2515.ErrNoChip) {
		p.backoff = min(2*p.backoff, backoffMax)
		p.retryAt = p.clock.Now() + p.backoff
		return
	}
	if err := p.restart(false); err != nil {
		p.backoff = min(2*p.backoff, backoffMax)
		p.retryAt = p.clock.Now() + p.backoff
		return
	}
	p.down = false
	p.healthAt = p.clock.Now() + healthEvery
	p.updateGate()
	p.info("chip back; bridging again", "controller", p.Name)
}
