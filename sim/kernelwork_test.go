package sim

import (
	"math"
	"testing"

	"cand/config"
	"cand/internal/kernelop"
	"cand/sim/clock"
)

// The board's kernel costs: per kind of system call, its published figure for
// that kind of kernel work at the ARM clock now over the host's; a park one
// hand-off of the round trip, a wake-up two; with user_factor none of them.
func TestKernelCostsFromTheBoardsFigures(t *testing.T) {
	p, _ := ProfileOf(config.SimBoardPi3)
	host := Calibration{KernelNs: 200, HandOffNs: 5000, WokenNs: 1500, SyscallNs: 1000, PipeNs: 4000, RoundTripNs: 20000, MeterNs: 40}
	b, err := newBoard(p, &config.Hardware{}, host)
	if err != nil {
		t.Fatal(err)
	}
	// The Pi Zero 2 W's Cortex-A53 at 1 GHz (UnixBench lps), at 600 MHz.
	const slow = 1e9 / 600e6
	syscall, pipe, trip := 1e9/488229.9/5*slow, 1e9/140813.3*slow, 1e9/26368.0*slow
	cpu := b.clockCPU(600e6, 250e6)
	for op, want := range map[kernelop.Op]float64{kernelop.SocketWrite: pipe / 4000, kernelop.SocketRead: pipe / 4000, kernelop.EventRead: pipe / 4000,
		kernelop.EpollLook: syscall / 1000, kernelop.ClockRead: syscall / 1000, kernelop.Wake: trip / 20000} {
		if got := cpu.KernelFactor[op]; got != int64(want*clock.FactorUnit) {
			t.Errorf("%s: kernel factor %d/%d, want %d", op, got, clock.FactorUnit, int64(want*clock.FactorUnit))
		}
	}
	if cpu.ParkBoardNs != int64(trip/2) || cpu.WakeBoardNs != int64(trip) || cpu.WokenHostNs != 1500 || cpu.MeterNs != 40 {
		t.Errorf("park %d, wake-up %d, woken %d, meter %d ns; want %d, %d, 1500, 40", cpu.ParkBoardNs, cpu.WakeBoardNs, cpu.WokenHostNs, cpu.MeterNs,
			int64(trip/2), int64(trip))
	}
	// Waking a thread is one hand-off on the board, whatever the host's took;
	// no other kind has a fixed cost.
	var fixed [kernelop.NumOps]int64
	fixed[kernelop.Wake] = int64(trip / 2)
	if cpu.KernelFixedNs != fixed {
		t.Errorf("fixed kernel costs %v, want %v", cpu.KernelFixedNs, fixed)
	}
	// Twice the clock, half the board's time.
	if f, f2 := b.KernelFactor(kernelop.SocketWrite, 1200e6), b.KernelFactor(kernelop.SocketWrite, 600e6); f2 != 2*f {
		t.Errorf("kernel factor at 600 MHz %g, want twice that at 1200 MHz, %g", f2, f)
	}
	// user_factor: no kernel factors, the board's park and wake-up from the
	// host's times the factor.
	b, _ = newBoard(p, &config.Hardware{SimKernelCost: config.SimKernelCostUserFactor}, host)
	old := b.clockCPU(600e6, 250e6)
	if old.KernelFactor != [kernelop.NumOps]int64{} || old.KernelFixedNs != [kernelop.NumOps]int64{} || old.ParkBoardNs != 0 || old.WakeBoardNs != 0 || old.WokenHostNs != 0 || old.MeterNs != 0 ||
		old.ParkHostNs != 5000 || old.WakeHostNs != 8500 {
		t.Errorf("user_factor: clock CPU %+v, want no kernel costs, park and wake-up at host 5000 and 8500 ns", old)
	}
	// An unmeasured host figure leaves its calls at the factor.
	host.PipeNs = 0
	b, _ = newBoard(p, &config.Hardware{}, host)
	if f := b.clockCPU(600e6, 250e6).KernelFactor; f[kernelop.SocketWrite] != 0 || f[kernelop.EpollLook] == 0 {
		t.Errorf("no host pipe figure: kernel factors %v, want none for the pipe's kinds only", f)
	}
}

// Every board's kernel figures at its top clock: the Pi 2's, derived, lie
// between the Pi 1's and the Pi 3's; the Pi 4 and Pi Zero scale theirs from the
// clock they were published at.
func TestKernelFiguresPerBoard(t *testing.T) {
	at := func(name config.SimBoard, w KernelWork) float64 {
		p, _ := ProfileOf(name)
		return Board{Profile: p}.WorkNs(w, p.ARMMaxHz)
	}
	for _, w := range []KernelWork{Syscall, Pipe, RoundTrip} {
		pi1, pi2, pi3 := at(config.SimBoardPi1, w), at(config.SimBoardPi2, w), at(config.SimBoardPi3, w)
		if pi2 <= pi3 || pi2 >= pi1 {
			t.Errorf("work %d: Pi 2 %.0f ns, want between the Pi 3's %.0f and the Pi 1's %.0f", w, pi2, pi3, pi1)
		}
	}
	if got, want := at(config.SimBoardPi4, Syscall), 1e9/703409.2/5*2150/1500; math.Abs(got-want) > 1e-9 {
		t.Errorf("Pi 4 system call %g ns at 1.5 GHz, want %g", got, want)
	}
	if got, want := at(config.SimBoardPiZero, RoundTrip), 1e9/14612.3; math.Abs(got-want) > 1e-9 {
		t.Errorf("Pi Zero round trip %g ns at 1 GHz, want %g", got, want)
	}
}

// The virtual Pi hands the owner its clock as the meter under the strict rule
// (with user_factor it charges the calls as running, and takes the simulator's
// own out), and the delivery thread's core the clock's kernel cost only with the
// board's kernel figures; under another rule, nothing.
func TestPiKernelMeter(t *testing.T) {
	for _, c := range []struct {
		hw          string
		meter, cost bool
	}{{"", true, true}, {"  sim_kernel_cost: board\n", true, true}, {"  sim_kernel_cost: user_factor\n", true, false}, {"  sim_cpu: dedicated\n", false, false}} {
		pi := piOf(t, "hardware:\n  sim_board: pi3\n"+c.hw+"controllers:\n  - bitrate: 500000\n")
		if m := pi.Kernel(); (m != nil) != c.meter || (m != nil && m != kernelop.Meter(pi.Clock())) {
			t.Errorf("%q: meter %T, want the clock: %v", c.hw, m, c.meter)
		}
		if k := pi.KernelCost(); (k != nil) != c.cost {
			t.Errorf("%q: kernel cost for other threads set %v, want %v", c.hw, k != nil, c.cost)
		}
	}
}

// The host's kernel work and the meter:
//
//	go test -run - -bench KernelWork -benchtime 3x ./sim/
func BenchmarkKernelWork(b *testing.B) {
	for b.Loop() {
		b.ReportMetric(measureSyscalls(), "syscall-ns")
		b.ReportMetric(measurePipe(), "pipe-ns")
		b.ReportMetric(measureRoundTrip(), "roundtrip-ns")
		b.ReportMetric(measureMeter(), "meter-ns")
	}
}
