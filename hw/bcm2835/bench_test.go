package bcm2835_test

import (
	"slices"
	"testing"

	"cand/hw/bcm2835"
	"cand/sim/soc"
)

// GPIO hot path: one register access per call. On MMIO over plain memory the cost
// is the atomic access itself; on the sim it is the model's work.
func BenchmarkGPIO(b *testing.B) {
	mem := make([]byte, bcm2835.BlockSize)
	mm, err := bcm2835.NewMMIO[bcm2835.GPIOReg](mem)
	if err != nil {
		b.Fatal(err)
	}
	sim := soc.New(core, bcm2835.SoCBCM2837)
	for _, be := range []struct {
		name string
		regs bcm2835.Regs[bcm2835.GPIOReg]
	}{{"mmio", mm}, {"sim", sim.GPIO()}} {
		g := bcm2835.NewGPIO(be.regs, bcm2835.SoCBCM2837)
		g.SetFunction(22, bcm2835.FselOutput)
		b.Run("Set/"+be.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				g.Set(22)
			}
		})
		b.Run("Clear/"+be.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				g.Clear(22)
			}
		})
		b.Run("Level/"+be.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				g.Level(22)
			}
		})
	}
}

// Transfers at 10 MHz (9.6 MHz at 250 MHz core) on the sim: wire time, and the
// measured CS-down→CS-up time per transfer as a median (cs-p50-ns: the engine's
// cost; the mean also carries every preemption of this noisy machine), its ratio to
// the wire time, and the fraction of CS-down→CS-up not spent asleep (polled/op).
func BenchmarkTransfer(b *testing.B) {
	for _, n := range []int{2, 14, 32, 48, 64, 200} {
		b.Run(itoa(n)+"B", func(b *testing.B) {
			r := newRig(b, nil, bcm2835.SPIOptions{})
			d := r.device(b, ce0)
			tx, rx := make([]byte, n), make([]byte, n)
			var tm bcm2835.Timing
			var samples [4096]int64
			var cs, sleptNs int64
			i, slept := 0, 0
			b.ReportAllocs()
			for b.Loop() {
				if err := d.Transfer(tx, rx, &tm); err != nil {
					b.Fatal(err)
				}
				cs += tm.CSUp - tm.CSDown
				samples[i%len(samples)] = tm.CSUp - tm.CSDown
				i++
				if tm.Slept {
					slept++
				}
				sleptNs += tm.SleptNs
			}
			got := samples[:min(i, len(samples))]
			slices.Sort(got)
			b.ReportMetric(float64(tm.WireNs), "wire-ns")
			b.ReportMetric(float64(got[len(got)/2]), "cs-p50-ns")
			b.ReportMetric(float64(cs)/float64(i), "cs-mean-ns")
			b.ReportMetric(float64(got[len(got)/2])/float64(tm.WireNs), "p50/wire")
			b.ReportMetric(float64(slept)/float64(i), "slept/op")
			b.ReportMetric(1-float64(sleptNs)/float64(cs), "polled/op")
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// READ RX BUFFER's shape on the sim at 9.6 MHz: the fixed 14-byte transfer against
// TransferThen's 6-byte header and then the data bytes the DLC asks for (the echo
// slave complements: tx[5] = ^dlc answers dlc). cs-p50-ns against wire-ns shows
// what the second part's FIFO turnaround costs.
func BenchmarkReadRxBuffer(b *testing.B) {
	for _, c := range []struct {
		name string
		size int
		dlc  int // -1: a plain Transfer of size bytes
	}{{"Transfer-14B", 14, -1}, {"Then-6+8B", 14, 8}, {"Transfer-8B", 8, -1}, {"Then-6+0B", 14, 0}} {
		b.Run(c.name, func(b *testing.B) {
			r := newRig(b, nil, bcm2835.SPIOptions{})
			d := r.device(b, ce0)
			tx, rx := make([]byte, c.size), make([]byte, c.size)
			if c.dlc >= 0 {
				tx[5] = ^byte(c.dlc)
			}
			var tm bcm2835.Timing
			var samples [4096]int64
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if c.dlc < 0 {
					err = d.Transfer(tx, rx, &tm)
				} else {
					_, err = d.TransferThen(tx, rx, 6, dlcMore, &tm)
				}
				if err != nil {
					b.Fatal(err)
				}
				samples[i%len(samples)] = tm.CSUp - tm.CSDown
				i++
			}
			got := samples[:min(i, len(samples))]
			slices.Sort(got)
			b.ReportMetric(float64(tm.WireNs), "wire-ns")
			b.ReportMetric(float64(got[len(got)/2]), "cs-p50-ns")
			b.ReportMetric(float64(got[len(got)*9/10]), "cs-p90-ns")
		})
	}
}
