package sim

import (
	"crypto/sha256"
	"runtime"
	"slices"
	"testing"

	"cand/internal/mono"
	"cand/sim/clock"
)

// On the strict rule the virtual Pi's owner thread calibrates itself when it
// binds: the factor is the board's kernel time over the owner's own estimate.
func TestPiCalibratesOnTheOwnerThread(t *testing.T) {
	pi := piOf(t, "controllers:\n  - bitrate: 500000\n")
	clk := pi.Clock()
	bindHere(t, clk)
	st := clk.Stats()
	est := clk.HostKernelNs()
	if st.CalibBursts == 0 || est <= 0 || st.Removed[clock.Calibration].Count == 0 {
		t.Fatalf("after binding: %d bursts, estimate %g ns, removed %+v: want bursts, removed", st.CalibBursts, est, st.Removed[clock.Calibration])
	}
	arm, _ := pi.Clocks()
	// Never below 1: under an emulator the host may be slower than the board.
	want := max(int64(pi.Board().KernelNs(arm))*1000*clock.FactorUnit/int64(est*1000+0.5), clock.FactorUnit)
	if f := clk.CPU().Factor; f < want-1 || f > want+1 {
		t.Errorf("factor %d/%d, want the board's %.0f ns over the estimate %.1f ns: %d", f, clock.FactorUnit, pi.Board().KernelNs(arm), est, want)
	}
}

// The spread of the one-shot calibration (20 consecutive Calibrate calls) and of
// the continuous estimate on a bound owner-like thread, taken at the same moments
// (after each call, 100 ms of register accesses with 20 µs of other work between
// them):
//
//	go test -run - -bench CalibrationSpread -benchtime 1x ./sim/
func BenchmarkCalibrationSpread(b *testing.B) {
	const rounds = 20
	for b.Loop() {
		runtime.LockOSThread()
		clk := clock.New()
		clk.SetKernel(newBurstKernel())
		if err := clk.BindCPU(); err != nil {
			runtime.UnlockOSThread()
			b.Skipf("cannot bind the clock: %v", err)
		}
		var once, cont []float64
		var other [256]byte
		for range rounds {
			once = append(once, Calibrate().KernelNs)
			for end := mono.Now() + 100e6; mono.Now() < end; {
				clk.Access()
				clk.Leave()
				for t := mono.Now() + 20e3; mono.Now() < t; {
					sha256.Sum256(other[:]) // other code between accesses, as the driver's
				}
			}
			cont = append(cont, clk.HostKernelNs())
		}
		st := clk.Stats()
		clk.UnbindCPU()
		runtime.UnlockOSThread()
		slices.Sort(once)
		slices.Sort(cont)
		b.ReportMetric(once[0], "oneshot-min-ns")
		b.ReportMetric(once[rounds/2], "oneshot-median-ns")
		b.ReportMetric(once[rounds-1], "oneshot-max-ns")
		b.ReportMetric(cont[0], "continuous-min-ns")
		b.ReportMetric(cont[rounds/2], "continuous-median-ns")
		b.ReportMetric(cont[rounds-1], "continuous-max-ns")
		b.ReportMetric(st.HostKernelNs.Min, "run-min-ns")
		b.ReportMetric(st.HostKernelNs.Max, "run-max-ns")
		b.ReportMetric(float64(st.CalibBursts), "bursts")
		b.ReportMetric(float64(st.Removed[clock.Calibration].Ns)/float64(rounds*100e6)*100, "burst-%")
	}
}

// How the kernel runs right after other code, against the one-shot figure: the
// fastest of 20 runs of 20 passes (one untimed pass before each), each after a
// gap of 20 µs or 2 ms filled with other code (SHA-256 of 4 KiB) or with the
// kernel itself, and after a burst's untimed warm-up (burstWarm passes):
//
//	go test -run - -bench KernelAfterOtherCode -benchtime 1x ./sim/
func BenchmarkKernelAfterOtherCode(b *testing.B) {
	var other [4096]byte
	k := &burstKernel{}
	fastest := func(gap int64, fill func(), warm int) float64 {
		best := int64(-1)
		for range 20 {
			for end := mono.Now() + gap; mono.Now() < end; {
				fill()
			}
			k.run(warm)
			t0 := mono.Now()
			k.run(20)
			if d := mono.Now() - t0; best < 0 || d < best {
				best = d
			}
		}
		return float64(best) / 20
	}
	sha := func() { sha256.Sum256(other[:]) }
	kern := func() { k.run(1) }
	for b.Loop() {
		one := measureKernel()
		b.ReportMetric(one, "oneshot-ns")
		b.ReportMetric(fastest(20e3, sha, 1)/one, "after-20us-other-x")
		b.ReportMetric(fastest(2e6, sha, 1)/one, "after-2ms-other-x")
		b.ReportMetric(fastest(2e6, kern, 1)/one, "after-2ms-kernel-x")
		b.ReportMetric(fastest(2e6, sha, burstWarm)/one, "after-2ms-other-warmed-x")
	}
}
