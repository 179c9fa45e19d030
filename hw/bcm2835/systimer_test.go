package bcm2835

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// tickingTimer is a System Timer block whose counter moves on by step after
// every load: CLO and CHI are read at different counts, as on silicon.
type tickingTimer struct {
	count uint64
	step  uint64
	loads int
}

func (f *tickingTimer) Load(off STReg) uint32 {
	c := f.count
	f.count += f.step
	f.loads++
	switch off {
	case STCLO:
		return uint32(c)
	case STCHI:
		return uint32(c >> 32)
	}
	return 0
}

func (f *tickingTimer) Store(STReg, uint32) { panic("the System Timer reader never writes") }

// Count is right whichever read CLO wraps between: the count it returns is one
// the counter held during the three reads.
func TestSystemTimerCountAcrossRollover(t *testing.T) {
	const wrap = uint64(7) << 32 // CLO wraps to 0 and CHI goes 6 → 7 here
	for _, tc := range []struct {
		name  string
		start uint64 // count at the first read (CHI)
		step  uint64
		want  uint64 // the count of the CLO read, with its own CHI
	}{
		{"no wrap", wrap - 100, 1, wrap - 99},
		{"CLO wraps between CHI and CLO", wrap - 1, 1, wrap},
		{"CLO wraps between CLO and CHI", wrap - 2, 1, wrap - 1},
		{"CLO wraps between CLO and CHI, CLO at its top", wrap - 3, 2, wrap - 1},
		{"CLO wraps between CHI and CLO, well past", wrap - 5, 10, wrap + 5},
		{"counter at its start", 0, 1, 1},
		{"64-bit wrap between CLO and CHI", ^uint64(0) - 1, 1, ^uint64(0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &tickingTimer{count: tc.start, step: tc.step}
			if got := NewSystemTimer(f).Count(); got != tc.want {
				t.Fatalf("Count = %#x, want %#x", got, tc.want)
			}
			if f.loads != 3 {
				t.Fatalf("%d register loads, want 3 (CHI, CLO, CHI)", f.loads)
			}
		})
	}
}

func TestSystemTimerCountAllocatesNothing(t *testing.T) {
	st := NewSystemTimer(&tickingTimer{step: 1})
	if n := testing.AllocsPerRun(100, func() { _ = st.Count() }); n != 0 {
		t.Fatalf("allocs = %v", n)
	}
}

func TestArchTimer(t *testing.T) {
	for s, want := range map[SoC]bool{SoCBCM2835: false, SoCBCM2836: true, SoCBCM2837: true, SoCBCM2711: true, SoCUnknown: false} {
		if got := s.ArchTimer(); got != want {
			t.Errorf("%v.ArchTimer() = %v, want %v", s, got, want)
		}
	}
}

// The System Timer comes through /dev/mem at the peripheral base + 0x3000, and
// Close unmaps it with the other blocks.
func TestMapSystemTimer(t *testing.T) {
	for _, tc := range []struct {
		name string
		fix  fixture
	}{{"Pi Zero", fixPiZero}, {"Pi 3", fixPi3}, {"Pi 4", fixPi4}} {
		t.Run(tc.name, func(t *testing.T) {
			b, root := detected(t, tc.fix)
			fakeDevices(t, root, b, true)
			f, err := os.OpenFile(filepath.Join(root, pathDevMem), os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			// CLO and CHI of a counter at 0x12_89ABCDEF.
			at := int64(b.PeriBase) + SystemTimerOffset
			_, err1 := f.WriteAt(binary.LittleEndian.AppendUint32(nil, 0x89ABCDEF), at+int64(STCLO))
			_, err2 := f.WriteAt(binary.LittleEndian.AppendUint32(nil, 0x12), at+int64(STCHI))
			f.Close()
			if err := errors.Join(err1, err2); err != nil {
				t.Fatal(err)
			}
			m, err := Map(b, root)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if m.SystemTimer != nil {
				t.Fatal("Map mapped the System Timer unasked")
			}
			if err := m.MapSystemTimer(b, root); err != nil {
				t.Fatal(err)
			}
			if err := m.MapSystemTimer(b, root); err == nil {
				t.Fatal("a second MapSystemTimer did not fail")
			}
			r, err := NewMMIO[STReg](m.SystemTimer)
			if err != nil {
				t.Fatal(err)
			}
			if got := NewSystemTimer(r).Count(); got != 0x12_89ABCDEF {
				t.Fatalf("Count = %#x, want 0x1289abcdef", got)
			}
			if err := m.Close(); err != nil || m.SystemTimer != nil {
				t.Fatalf("Close: %v, SystemTimer view %d bytes after it", err, len(m.SystemTimer))
			}
		})
	}
}

func TestMapSystemTimerRefusals(t *testing.T) {
	b, root := detected(t, fixPi3)
	m := &Mapping{}
	want := "cannot map System Timer at 0x3f003000 through /dev/mem: /dev/mem does not exist (a kernel without " +
		"CONFIG_DEVMEM, or a container without the device): pass /dev/mem into the container, or use " +
		"hardware.backend: sim"
	if err := m.MapSystemTimer(b, root); err == nil || err.Error() != want {
		t.Fatalf("error\n%v\nwant\n%s", err, want)
	}
	if err := m.MapSystemTimer(Board{Model: "x", SoC: SoCBCM2837}, root); err == nil {
		t.Fatal("a Board without its peripheral base was mapped")
	}
	e := &AccessError{"mmap", "/dev/mem", BlockSystemTimer, 0x20003000, syscall.EPERM}
	want = "cannot map System Timer at 0x20003000 through /dev/mem: operation not permitted: this kernel " +
		"enforces strict /dev/mem (CONFIG_IO_STRICT_DEVMEM) and a driver has claimed the System Timer: boot " +
		"with iomem=relaxed, or read the time through the kernel with hardware.clock_source: runtime"
	if e.Error() != want {
		t.Fatalf("error\n%v\nwant\n%s", e, want)
	}
}
