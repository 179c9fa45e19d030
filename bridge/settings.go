package bridge

import (
	"time"

	"cand/mcp2515"
)

// Settings are a port's settings that change while it runs without touching the
// chip (a configuration reload); PortConfig has the same fields.
type Settings struct {
	ErrorFrames bool
	RestartNs   int64
	TxTimeoutNs int64
	PollWindow  time.Duration
}

// Settings returns the port's settings. Owner thread only: before Run, or
// through Owner.Apply.
func (p *Port) Settings() Settings {
	return Settings{ErrorFrames: p.errorFrames, RestartNs: p.restartNs, TxTimeoutNs: p.txTimeoutNs, PollWindow: p.pollWindow}
}

// SetSettings changes the port's settings, through Owner.Apply: error frames
// from the next event on, the TX timeout for the frames already pending, the
// restart delay from the next bus-off on (a restart already scheduled keeps
// its time), the poll window from the next window on.
func (p *Port) SetSettings(s Settings) {
	p.errorFrames, p.restartNs, p.txTimeoutNs, p.pollWindow = s.ErrorFrames, s.RestartNs, s.TxTimeoutNs, s.PollWindow
}

// Reprogram gives the controller a new chip configuration (bit timing, mode,
// one-shot, filters) and restarts it with it, as a kernel CAN driver takes a new
// bitrate only with its link down and up: on the bus, the controller leaves it
// (pending frames are aborted and counted dropped, what the chip holds is read),
// and is initialised anew (a chip that does not answer then is retried with
// back-off). Off the bus (its chip down, bus-off, its interface down, its socket
// failed) the configuration is programmed when the controller next starts. It
// reports whether the chip was programmed now. Through Owner.Apply.
func (p *Port) Reprogram(cfg mcp2515.Config) bool {
	onBus := !p.failed && !p.down && !p.busOff && p.linkHave == LinkUp
	if onBus {
		p.leaveBus()
	}
	p.Ctl.SetConfig(cfg)
	if !onBus {
		return false
	}
	p.sockReadable = true // frames waited in the socket meanwhile
	return p.restartOrDown(false)
}
