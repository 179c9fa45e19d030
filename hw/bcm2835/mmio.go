package bcm2835

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// MMIO is a Regs over one memory-mapped register block (BlockSize bytes, e.g. from
// /dev/mem), addressed by the block's kind of offset O (SPIReg, GPIOReg, STReg). Go has no volatile: every access is a 32-bit sync/atomic load or store
// through a pointer into the mapping, which the compiler can neither elide nor
// reorder, and which compiles to LDAR/STLR on arm64 and to DMB-fenced accesses on
// arm — the ordering BCM2835 ARM Peripherals §1.3 asks for between peripherals.
// Load and Store take no lock, make no syscall and do not allocate.
type MMIO[O Offset] struct {
	base unsafe.Pointer
	mem  []byte // keeps the mapping reachable
}

// NewMMIO wraps mem, which must be at least BlockSize bytes and 4-byte aligned,
// as the block whose registers O addresses. Only the first BlockSize bytes are
// addressed.
func NewMMIO[O Offset](mem []byte) (*MMIO[O], error) {
	if len(mem) < BlockSize {
		return nil, fmt.Errorf("bcm2835: register block is %d bytes, need %d: map a whole page at the block's base", len(mem), BlockSize)
	}
	p := unsafe.Pointer(unsafe.SliceData(mem))
	if uintptr(p)%4 != 0 {
		return nil, fmt.Errorf("bcm2835: register block at %#x is not 4-byte aligned: map it with mmap, not from a Go allocation", uintptr(p))
	}
	return &MMIO[O]{base: p, mem: mem[:BlockSize:BlockSize]}, nil
}

func (m *MMIO[O]) word(off O) *uint32 {
	if off >= BlockSize || off&3 != 0 {
		panic("bcm2835: register offset outside the block or not 32-bit aligned")
	}
	return (*uint32)(unsafe.Add(m.base, off))
}

// Load reads the 32-bit register at byte offset off.
func (m *MMIO[O]) Load(off O) uint32 { return atomic.LoadUint32(m.word(off)) }

// Store writes v to the 32-bit register at byte offset off.
func (m *MMIO[O]) Store(off O, v uint32) { atomic.StoreUint32(m.word(off), v) }
