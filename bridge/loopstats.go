package bridge

import (
	"sync/atomic"

	"cand/internal/mono"
)

// LoopStats count the owner loop's turns and polls and the most work it did between
// two turns: what PollsPerTurn and WindowRearms bound, for tests and metrics.
type LoopStats struct {
	Turns uint64 // loop turns, each one a heartbeat
	Polls uint64 // poll-window polls
	// Windows counts the poll windows opened; CappedWindows those closed at
	// WindowRearms.
	Windows, CappedWindows uint64
	// MaxPollsPerTurn is the most polls between two turns (at most PollsPerTurn).
	MaxPollsPerTurn uint64
	// MaxInterruptsPerTurn is the most interrupts the poll window handled between
	// two turns (at most one per port).
	MaxInterruptsPerTurn uint64
	// MaxWindowRearms is the most times one window was re-armed (at most
	// WindowRearms).
	MaxWindowRearms uint64
}

// schedule is the loop's counting, in plain fields of the owner thread; beat
// publishes it.
type schedule struct {
	turns, polls, ints, windows, capped uint64
	maxRearms                           uint64 // of one window
	// at the previous turn
	turnPolls, turnInts uint64
	maxPolls, maxInts   uint64
}

// loopStats is the published schedule, read from any goroutine.
type loopStats struct {
	turns, polls, windows, capped, maxPolls, maxInts, maxRearms atomic.Uint64
}

// beat starts a loop turn: the heartbeat, and the schedule's counts published. The
// counts that change every turn are stored every turn, the others when they change.
func (o *Owner) beat() {
	o.heartbeat.Store(mono.Now())
	s, pub := &o.sched, &o.stats
	s.turns++
	pub.turns.Store(s.turns)
	if s.polls == s.turnPolls {
		return // nothing else changes without a poll
	}
	pub.polls.Store(s.polls)
	if n := s.polls - s.turnPolls; n > s.maxPolls {
		s.maxPolls = n
		pub.maxPolls.Store(n)
	}
	if n := s.ints - s.turnInts; n > s.maxInts {
		s.maxInts = n
		pub.maxInts.Store(n)
	}
	s.turnPolls, s.turnInts = s.polls, s.ints
	if s.windows != pub.windows.Load() {
		pub.windows.Store(s.windows)
	}
	if s.capped != pub.capped.Load() {
		pub.capped.Store(s.capped)
	}
	if s.maxRearms != pub.maxRearms.Load() {
		pub.maxRearms.Store(s.maxRearms)
	}
}

// LoopStats returns the loop's counts as of its last turn. Safe from any goroutine.
func (o *Owner) LoopStats() LoopStats {
	pub := &o.stats
	return LoopStats{
		Turns: pub.turns.Load(), Polls: pub.polls.Load(),
		Windows: pub.windows.Load(), CappedWindows: pub.capped.Load(),
		MaxPollsPerTurn: pub.maxPolls.Load(), MaxInterruptsPerTurn: pub.maxInts.Load(),
		MaxWindowRearms: pub.maxRearms.Load(),
	}
}
