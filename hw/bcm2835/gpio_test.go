package bcm2835

import (
	"fmt"
	"slices"
	"testing"
)

// regLog is a Regs over plain memory that logs every access.
type regLog struct {
	mem [BlockSize / 4]uint32
	log []string
}

func (r *regLog) Load(off GPIOReg) uint32 {
	r.log = append(r.log, fmt.Sprintf("L%02x", off))
	return r.mem[off/4]
}

func (r *regLog) Store(off GPIOReg, v uint32) {
	r.log = append(r.log, fmt.Sprintf("S%02x=%x", off, v))
	r.mem[off/4] = v
}

// Set, Clear, Write and Level are exactly one register access each.
func TestGPIOOneAccess(t *testing.T) {
	r := &regLog{}
	g := NewGPIO(r, SoCBCM2837)
	g.Set(4)
	g.Clear(40)
	g.Write(53, true)
	g.Write(0, false)
	g.Level(33)
	g.Level(2)
	want := []string{"S1c=10", "S2c=100", "S20=200000", "S28=1", "L38", "L34"}
	if !slices.Equal(r.log, want) {
		t.Fatalf("accesses %v, want %v", r.log, want)
	}
}

func TestGPIOFunction(t *testing.T) {
	r := &regLog{}
	g := NewGPIO(r, SoCBCM2837)
	r.mem[GPFSEL0/4+1] = 0xFFFFFFFF
	if err := g.SetFunction(17, FselAlt4); err != nil {
		t.Fatal(err)
	}
	if got := r.mem[1]; got != 0xFFFFFFFF&^(7<<21)|uint32(FselAlt4)<<21 {
		t.Fatalf("GPFSEL1 = %#x", got)
	}
	if g.Function(17) != FselAlt4 || g.Function(18) != 7 {
		t.Fatalf("Function(17) = %#b, Function(18) = %#b", g.Function(17), g.Function(18))
	}
	if err := g.SetFunction(54, FselOutput); err == nil {
		t.Fatal("GPIO54 accepted on a BCM2837")
	}
	if err := g.SetFunction(3, 8); err == nil {
		t.Fatal("function 8 accepted")
	}
}

func TestGPIOPullSequence(t *testing.T) {
	r := &regLog{}
	g := NewGPIO(r, SoCBCM2835)
	if err := g.SetPull(35, PullUp); err != nil {
		t.Fatal(err)
	}
	want := []string{"S94=2", "S9c=8", "S94=0", "S9c=0"}
	if !slices.Equal(r.log, want) {
		t.Fatalf("pull sequence %v, want %v", r.log, want)
	}
	r.log = nil
	g = NewGPIO(r, SoCBCM2711)
	r.mem[(GPIOPUPPDN0+8)/4] = 0xFFFFFFFF
	if err := g.SetPull(35, PullDown); err != nil { // reg 2, field 3
		t.Fatal(err)
	}
	if got := r.mem[(GPIOPUPPDN0+8)/4]; got != 0xFFFFFFFF&^(3<<6)|0b10<<6 {
		t.Fatalf("GPIO_PUP_PDN_CNTRL2 = %#x", got)
	}
	if p, err := g.Pull(35); err != nil || p != PullDown {
		t.Fatalf("Pull(35) = %v, %v", p, err)
	}
}
