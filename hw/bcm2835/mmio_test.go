package bcm2835

import (
	"strings"
	"testing"
)

func TestMMIO(t *testing.T) {
	if _, err := NewMMIO[SPIReg](make([]byte, BlockSize-4)); err == nil || !strings.Contains(err.Error(), "4092 bytes") {
		t.Fatalf("short block: err = %v", err)
	}
	mem := make([]byte, 2*BlockSize)
	if _, err := NewMMIO[SPIReg](mem[1 : 1+BlockSize]); err == nil || !strings.Contains(err.Error(), "aligned") {
		t.Fatalf("unaligned block: err = %v", err)
	}
	m, err := NewMMIO[SPIReg](mem)
	if err != nil {
		t.Fatal(err)
	}
	m.Store(SPICLK, 0xA1B2C3D4)
	if got := m.Load(SPICLK); got != 0xA1B2C3D4 {
		t.Fatalf("Load = %#x", got)
	}
	if mem[8] != 0xD4 && mem[11] != 0xD4 {
		t.Fatalf("store did not land at byte offset 8: % x", mem[8:12])
	}
	m.Store(BlockSize-4, 1)
	if allocs := testing.AllocsPerRun(100, func() { m.Store(SPIFIFO, m.Load(SPICS)) }); allocs != 0 {
		t.Fatalf("%v allocations per access", allocs)
	}
	for _, off := range []SPIReg{BlockSize, 2} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("offset %#x did not panic", off)
				}
			}()
			m.Load(off)
		}()
	}
}
