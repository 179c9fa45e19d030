package bcm2835

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// Device tree fixtures as the firmware and kernels of each board family present
// them: compatible (NUL-separated), model (NUL-terminated), soc/ranges (big-endian
// cells, from the boards' .dtsi files), the root's #address-cells, and
// system/linux,revision (4 bytes, big-endian).

func cells(v ...uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, c := range v {
		binary.BigEndian.PutUint32(b[4*i:], c)
	}
	return b
}

func nul(s ...string) []byte {
	var b []byte
	for _, x := range s {
		b = append(b, x...)
		b = append(b, 0)
	}
	return b
}

// Peripheral windows in soc/ranges.
var (
	rangesBCM2835 = cells(0x7E000000, 0x20000000, 0x02000000)
	rangesBCM2836 = cells(0x7E000000, 0x3F000000, 0x01000000, 0x40000000, 0x40000000, 0x00001000)
	rangesBCM2711 = cells(0x7E000000, 0, 0xFE000000, 0x01800000,
		0x7C000000, 0, 0xFC000000, 0x02000000,
		0x40000000, 0, 0xFF800000, 0x00800000)
	// BCM2711 with arm_peri_high=1: the peripherals move above 4 GiB.
	rangesBCM2711High = cells(0x7E000000, 4, 0x7E000000, 0x01800000)
	rangesBCM2712     = cells(0x7C000000, 0x10, 0x7C000000, 0x04000000)
)

// fixture is a fake root: relative path → contents.
type fixture map[string][]byte

func (f fixture) with(path string, b []byte) fixture {
	g := fixture{}
	for k, v := range f {
		g[k] = v
	}
	if b == nil {
		delete(g, path)
	} else {
		g[path] = b
	}
	return g
}

func (f fixture) write(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for p, b := range f {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func board(compat []string, model string, ranges []byte, addrCells uint32, rev uint32) fixture {
	return fixture{
		pathCompatible: nul(compat...),
		pathModel:      nul(model),
		pathRanges:     ranges,
		pathAddrCells:  cells(addrCells),
		pathDTRevision: cells(rev),
	}
}

var (
	fixPiZero = board([]string{"raspberrypi,model-zero", "brcm,bcm2835"},
		"Raspberry Pi Zero Rev 1.3", rangesBCM2835, 1, 0x900092)
	fixPi1BPlus = board([]string{"raspberrypi,model-b-plus", "brcm,bcm2835"},
		"Raspberry Pi Model B Plus Rev 1.2", rangesBCM2835, 1, 0x0010)
	fixPi2 = board([]string{"raspberrypi,2-model-b", "brcm,bcm2836"},
		"Raspberry Pi 2 Model B Rev 1.1", rangesBCM2836, 1, 0xA01041)
	fixPi3 = board([]string{"raspberrypi,3-model-b", "brcm,bcm2837"},
		"Raspberry Pi 3 Model B Rev 1.2", rangesBCM2836, 1, 0xA02082)
	fixZero2W = board([]string{"raspberrypi,model-zero-2-w", "brcm,bcm2837"},
		"Raspberry Pi Zero 2 W Rev 1.0", rangesBCM2836, 1, 0x902120)
	fixPi4 = board([]string{"raspberrypi,4-model-b", "brcm,bcm2711"},
		"Raspberry Pi 4 Model B Rev 1.1", rangesBCM2711, 2, 0xC03111)
	fixPi400 = board([]string{"raspberrypi,400", "brcm,bcm2711"},
		"Raspberry Pi 400 Rev 1.0", rangesBCM2711, 2, 0xC03130)
	fixCM4 = board([]string{"raspberrypi,4-compute-module", "brcm,bcm2711"},
		"Raspberry Pi Compute Module 4 Rev 1.0", rangesBCM2711, 2, 0xB03140)
	fixPi5 = board([]string{"raspberrypi,5-model-b", "brcm,bcm2712"},
		"Raspberry Pi 5 Model B Rev 1.0", rangesBCM2712, 2, 0xC04170)
)

// cpuinfo of a Pi 3 on a downstream 32-bit kernel (the Revision line is what counts).
const cpuinfoPi3 = "processor\t: 0\nmodel name\t: ARMv7 Processor rev 4 (v7l)\n\n" +
	"Hardware\t: BCM2835\nRevision\t: a02082\nSerial\t\t: 00000000c0ffee00\n" +
	"Model\t\t: Raspberry Pi 3 Model B Rev 1.2\n"

// cpuinfo of an old Pi 1 Model B with the warranty bit set ("1000002"-style code).
const cpuinfoPi1B = "processor\t: 0\nmodel name\t: ARMv6-compatible processor rev 7 (v6l)\n\n" +
	"Hardware\t: BCM2835\nRevision\t: 100000e\nSerial\t\t: 00000000deadbeef\n"
