// Package transfer compares the SPI engine (hw/bcm2835) polling-first with
// sleeping for every transfer, CS-down → CS-up, for a transfer size: on a
// register model with an unbound clock whose slave echoes each byte (Run), or
// on a board's SPI0 with the MCP2515 answering (Compare, bench.BoardTransfers).
package transfer

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"time"

	"cand/hw/bcm2835"
	"cand/hw/pinout"
	"cand/sim/soc"
)

// CoreHz is the core clock of the SPI engine comparison: a Pi 3's 250 MHz
// gives SCLK 9.6 MHz (CDIV 26) for a 10 MHz request, 936 ns a byte.
const CoreHz = 250_000_000

// ClockHost is the clock the comparison's latencies are in: host
// CLOCK_MONOTONIC (bench.ClockHost), the engine running alone on a register
// model with an unbound clock.
const ClockHost = "host"

// SleepBudget is the poll budget and wake-up latency of the "sleep for every
// transfer" side: 0 means the default (20 µs) and a measured wake-up to the SPI
// engine, so the smallest figure, 1 ns, stands for none — every wait for bytes in
// flight goes to nanosleep.
const SleepBudget = time.Nanosecond

// echoSlave answers each byte with its complement.
type echoSlave struct{}

var _ soc.SPISlave = echoSlave{}

func (echoSlave) SetCS(active bool, at int64)                                {}
func (echoSlave) Exchange(mosi byte, mode uint8, sclk uint32, at int64) byte { return ^mosi }

// Run measures n transfers of size bytes on the register model, once
// polling-first (the default 20 µs budget) and once sleeping for every wait, on a
// locked OS thread as the owner thread runs.
func Run(size, n int) (Result, error) {
	return Compare(size, n, func(budget time.Duration) (*bcm2835.Device, func(), error) {
		d, err := echoDevice(budget)
		return d, func() {}, err
	}, make([]byte, size))
}

// Compare measures n transfers of tx on a device that open makes with the
// default poll budget, then on one that sleeps for every wait (budget
// SleepBudget).
func Compare(size, n int, open func(budget time.Duration) (*bcm2835.Device, func(), error), tx []byte) (Result, error) {
	res := Result{Bytes: size, Transfers: n}
	run := func(budget time.Duration) (p50, p99 time.Duration, slept float64, wire time.Duration, err error) {
		d, done, err := open(budget)
		if err != nil {
			return 0, 0, 0, 0, err
		}
		defer done()
		return measureTransfers(d, tx, n)
	}
	pollP50, pollP99, pollSlept, wire, err := run(bcm2835.DefaultPollBudget)
	if err != nil {
		return res, err
	}
	sleepP50, sleepP99, sleepSlept, _, err := run(SleepBudget)
	if err != nil {
		return res, err
	}
	res.WireUs = us(wire)
	res.PollP50, res.PollP99, res.PollSlept = us(pollP50), us(pollP99), pollSlept
	res.SleepP50, res.SleepP99, res.SleepSlept = us(sleepP50), us(sleepP99), sleepSlept
	if wire > 0 {
		res.PollVsWire = float64(pollP50) / float64(wire)
	}
	if pollP50 > 0 {
		res.SleepVsPoll = float64(sleepP50) / float64(pollP50)
	}
	return res, nil
}

// echoDevice is a 10 MHz device on CE0 of a fresh register model (CoreHz)
// whose slave echoes each byte's complement.
func echoDevice(budget time.Duration) (*bcm2835.Device, error) {
	s := soc.New(CoreHz, bcm2835.SoCBCM2837)
	g := bcm2835.NewGPIO(s.GPIO(), bcm2835.SoCBCM2837)
	for _, p := range []int{pinout.PinCE0, pinout.PinMISO, pinout.PinMOSI, pinout.PinSCLK} {
		g.SetFunction(p, bcm2835.FselAlt0)
	}
	if err := s.AttachSPI(echoSlave{}, pinout.PinCE0, false); err != nil {
		return nil, fmt.Errorf("transfer: attaching the test slave: %w", err)
	}
	opt := bcm2835.SPIOptions{CoreClockHz: CoreHz, PollBudget: budget}
	if budget == SleepBudget {
		opt.WakeLatency = SleepBudget
	}
	sp := bcm2835.NewSPI(s.SPI0(), g, opt)
	d, err := sp.Device(bcm2835.DeviceConfig{ClockHz: 10_000_000, CS: bcm2835.ChipSelect{Native: 0}})
	if err != nil {
		return nil, fmt.Errorf("transfer: SPI device: %w", err)
	}
	return d, nil
}

// measureTransfers makes n transfers of tx on d, on a locked OS thread, and
// returns the CS-down → CS-up p50 and p99, the share that slept, and the wire time.
func measureTransfers(d *bcm2835.Device, tx []byte, n int) (p50, p99 time.Duration, slept float64, wire time.Duration, err error) {
	rx := make([]byte, len(tx))
	samples := make([]int64, n)
	var tm bcm2835.Timing
	sleeps := 0
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i := range n {
		if err := d.Transfer(tx, rx, &tm); err != nil {
			return 0, 0, 0, 0, fmt.Errorf("transfer: %d-byte transfer: %w", len(tx), err)
		}
		samples[i] = tm.CSUp - tm.CSDown
		if tm.Slept {
			sleeps++
		}
	}
	slices.Sort(samples)
	q := func(f float64) time.Duration { return time.Duration(samples[min(int(f*float64(n)), n-1)]) }
	return q(0.5), q(0.99), float64(sleeps) / float64(n), time.Duration(tm.WireNs), nil
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }

// Result compares the SPI engine polling-first with sleeping for every
// transfer, CS-down → CS-up, for one transfer size, in host time (Clock): the
// engine runs alone on a register model with an unbound clock.
type Result struct {
	Clock       string  `json:"clock"`
	Bytes       int     `json:"bytes"`
	Transfers   int     `json:"transfers"`
	WireUs      float64 `json:"wire_us"`
	PollP50     float64 `json:"poll_p50_us"`
	SleepP50    float64 `json:"sleep_p50_us"`
	PollP99     float64 `json:"poll_p99_us"`
	SleepP99    float64 `json:"sleep_p99_us"`
	PollSlept   float64 `json:"poll_slept_fraction"`
	SleepSlept  float64 `json:"sleep_slept_fraction"`
	PollVsWire  float64 `json:"poll_p50_over_wire"`
	SleepVsPoll float64 `json:"sleep_p50_over_poll_p50"`
}

var _ json.Marshaler = Result{}

// MarshalJSON writes the transfer comparison with its clock, host.
func (x Result) MarshalJSON() ([]byte, error) {
	type plain Result
	x.Clock = ClockHost
	return json.Marshal(plain(x))
}
