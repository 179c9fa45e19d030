package soc_test

import (
	"testing"
	"time"

	"cand/hw/bcm2835"
	"cand/internal/waitfor"
)

// recorder is an SPI slave that records what it sees and answers each MOSI byte
// with mosi ^ xor, so its answers are told apart from another slave's. Its buffers
// are fixed so recording does not allocate.
type recorder struct {
	xor    byte
	active bool
	cs     [64]csEvent
	ncs    int
	got    [4096]byte
	mode   [4096]uint8
	sclk   [4096]uint32
	at     [4096]int64
	n      int
	strays int // bytes offered while not selected (never, if the model is right)
}

type csEvent struct {
	active bool
	at     int64
}

func (r *recorder) SetCS(active bool, at int64) {
	r.active = active
	if r.ncs < len(r.cs) {
		r.cs[r.ncs] = csEvent{active, at}
	}
	r.ncs++
}

func (r *recorder) Exchange(mosi byte, mode uint8, sclkHz uint32, at int64) byte {
	if !r.active {
		r.strays++
	}
	if r.n < len(r.got) {
		r.got[r.n], r.mode[r.n], r.sclk[r.n], r.at[r.n] = mosi, mode, sclkHz, at
	}
	r.n++
	return mosi ^ r.xor
}

func (r *recorder) reset() { r.n, r.ncs = 0, 0 }

// waitCS polls the SPI0 CS register until all of bits are set, with a deadline.
func waitCS(t *testing.T, r bcm2835.Regs[bcm2835.SPIReg], bits bcm2835.CS) bcm2835.CS {
	t.Helper()
	var v bcm2835.CS
	if !waitfor.Until(2*time.Second, func() bool { v = bcm2835.LoadCS(r); return v&bits == bits }) {
		t.Fatalf("CS bits %#x not set within 2 s; CS = %#08x", bits, v)
	}
	return v
}

func setALT0(g bcm2835.Regs[bcm2835.GPIOReg], pins ...int) {
	gp := bcm2835.NewGPIO(g, bcm2835.SoCBCM2837)
	for _, p := range pins {
		if err := gp.SetFunction(p, bcm2835.FselAlt0); err != nil {
			panic(err)
		}
	}
}
