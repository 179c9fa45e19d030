package bridge

import (
	"cand/hw/bcm2835"
	"cand/mcp2515"
	"cand/metrics"
)

// Transport is one chip select's SPI transfer with its timestamps: a
// *bcm2835.Device on real registers and on the virtual Pi alike.
type Transport interface {
	Transfer(tx, rx []byte, t *bcm2835.Timing) error
}

// SPI adapts a Transport to mcp2515.SPI and records each transfer's timing by kind
// and completion (poll or sleep). It holds no lock: only the owner thread calls it.
type SPI struct {
	dev  Transport
	then TransportThen // dev, if it can lengthen a transfer; else nil
	m    *metrics.Controller
	t    bcm2835.Timing
	// handlerStart is set when an interrupt's handler starts; the next transfer's
	// CS-down closes the handler → first CS-down stage.
	handlerStart int64
	phase        spiPhase
	probe        *Probe
	n            spiCounts // counted since the last publish
}

// spiCounts are the transfer counters an interrupt adds up in plain fields and
// publishes once, at its end (EndInterrupt): five 64-bit atomic adds a transfer
// fewer on the owner thread while the chip waits. On 32-bit ARM each is an
// LDREXD/STREXD loop between barriers, and below ARMv7 (Pi Zero, Pi 1) Go
// emulates it with a spinlock (Go's internal/runtime/atomic/atomic_arm.s). A
// transfer outside an interrupt publishes at once. A scrape during an
// interrupt sees them at most that interrupt late.
type spiCounts struct{ polls, sleeps, bytes, rxTransfers, rxBytes uint64 }

// publish adds what was counted to the controller's metrics.
func (s *SPI) publish() {
	n := &s.n
	for _, c := range []struct {
		ctr *metrics.Counter
		v   uint64
	}{{s.m.Polls, n.polls}, {s.m.Sleeps, n.sleeps}, {s.m.SPIBytes, n.bytes}, {s.m.RXSPITransfers, n.rxTransfers}, {s.m.RXSPIBytes, n.rxBytes}} {
		if c.v != 0 {
			c.ctr.Add(c.v)
		}
	}
	*n = spiCounts{}
}

var (
	_ mcp2515.SPI     = (*SPI)(nil)
	_ mcp2515.SPIThen = (*SPI)(nil)
)

// NewSPI returns the adapter for one controller; probe may be nil.
func NewSPI(dev Transport, m *metrics.Controller, probe *Probe) *SPI {
	then, _ := dev.(TransportThen)
	return &SPI{dev: dev, then: then, m: m, probe: probe}
}

// spiPhase is whose transfers the SPI is counting: an interrupt's are its RX
// transfers (RXSPITransfers, RXSPIBytes); a TX refill's within it are not.
type spiPhase uint8

const (
	phaseIdle      spiPhase = iota // no interrupt being handled
	phaseInterrupt                 // an interrupt's status passes
	phaseRefill                    // a TX refill between two of them (Port.refillInInterrupt)
)

// BeginInterrupt notes the start of an interrupt handler at ns.
func (s *SPI) BeginInterrupt(ns int64) { s.handlerStart, s.phase = ns, phaseInterrupt }

// EndInterrupt closes the interrupt's accounting and publishes its counts.
func (s *SPI) EndInterrupt() {
	s.handlerStart, s.phase = 0, phaseIdle
	s.publish()
}

// BeginRefill counts the transfers that follow as a TX refill's, until EndRefill
// returns to the interrupt's.
func (s *SPI) BeginRefill() { s.phase = phaseRefill }

// EndRefill returns to counting the interrupt's transfers.
func (s *SPI) EndRefill() { s.phase = phaseInterrupt }

// TransportThen is a Transport that can lengthen a transfer under one chip select
// (bcm2835.Device.TransferThen).
type TransportThen interface {
	TransferThen(tx, rx []byte, first int, more func(head []byte) int, t *bcm2835.Timing) (int, error)
}

func (s *SPI) Transfer(op mcp2515.Op, tx, rx []byte) error {
	s.probe.spi(true)
	err := s.dev.Transfer(tx, rx, &s.t)
	s.probe.spi(false)
	return s.record(op, len(tx), err)
}

// TransferThen implements mcp2515.SPIThen. Over a Transport that cannot lengthen
// a transfer it shifts all of tx.
func (s *SPI) TransferThen(op mcp2515.Op, tx, rx []byte, first int, more func([]byte) int) (int, error) {
	if s.then == nil {
		return len(tx), s.Transfer(op, tx, rx)
	}
	s.probe.spi(true)
	n, err := s.then.TransferThen(tx, rx, first, more, &s.t)
	s.probe.spi(false)
	return n, s.record(op, n, err)
}

// record counts a transfer of n bytes that ended with err, and its timing.
func (s *SPI) record(op mcp2515.Op, n int, err error) error {
	if err != nil {
		s.m.SPIErrors.Inc()
		return err
	}
	if s.handlerStart != 0 {
		s.m.HandlerToCS.Observe(s.t.CSDown - s.handlerStart)
		s.handlerStart = 0
	}
	completion := metrics.CompletionPoll
	if s.t.Slept {
		completion = metrics.CompletionSleep
		s.n.sleeps++
	} else {
		s.n.polls++
	}
	s.m.ObserveTransferTime(op, completion, s.t.CSUp-s.t.CSDown)
	s.n.bytes += uint64(n)
	switch s.phase {
	case phaseInterrupt:
		s.n.rxTransfers++
		s.n.rxBytes += uint64(n)
	case phaseIdle:
		s.publish()
	}
	return nil
}
