package sim

import (
	"crypto/sha256"
	"runtime"
	"slices"
	"testing"

	"cand/config"
	"cand/internal/mono"
	"cand/sim/clock"
)

// On the strict rule the virtual Pi's owner thread calibrates itself when it
// binds: the factor is the board's kernel time over the owner's own estimate.
func TestPiCalibratesOnTheOwnerThread(t *testing.T) {
	cfg, err := config.Parse("x.yaml", []byte("controllers:\n  - bitrate: 500000\n"))
	if err != nil {
		t.Fatal(err)
	}
	pi, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pi.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	clk := pi.Clock()
	if err := clk.BindCPU(); err != nil {
		t.Skipf("cannot bind the clock: %v", err)
	}
	defer clk.UnbindCPU()
	st := clk.Stats()
	est := clk.HostKernelNs()
	if st.CalibBursts == 0 || est <= 0 || st.Removed[clock.Calibration].Count != st.CalibBursts {
		t.Fatalf("after binding: %d bursts, estimate %g ns, removed %+v: want bursts, each removed", st.CalibBursts, est, st.Removed[clock.Calibration])
	}
	arm, _ := pi.Clocks()
	want := int64(pi.Board().KernelNs(arm)) * 1000 * clock.FactorUnit / int64(est*1000+0.5)
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
