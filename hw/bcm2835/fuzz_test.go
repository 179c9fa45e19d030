package bcm2835

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// detectFiles are the files FuzzDetect writes, bit i of its present argument
// selecting detectFiles[i].
var detectFiles = [...]string{pathCompatible, pathModel, pathRanges, pathAddrCells, pathDTRevision, pathCPUInfo, pathBootConfig, pathBootConfig0}

// FuzzDetect: whatever the device tree, cpuinfo and config.txt hold, Detect either
// names a supported SoC with its peripheral base, GPIO count and a core clock range,
// or refuses with the error type the signals call for and a message saying what to
// do; and the same files always give the same answer.
func FuzzDetect(f *testing.F) {
	for _, fix := range []fixture{fixPiZero, fixPi1BPlus, fixPi2, fixPi3, fixZero2W, fixPi4, fixPi400, fixCM4, fixPi5,
		fixPi3.with(pathDTRevision, nil).with(pathCPUInfo, []byte(cpuinfoPi3)),
		fixPi4.with(pathBootConfig, []byte("[pi4]\nhdmi_enable_4kp60=1\n")),
		fixPi4.with(pathRanges, rangesBCM2711High),
	} {
		present := uint8(0)
		var files [len(detectFiles)][]byte
		for i, p := range detectFiles {
			if b, ok := fix[p]; ok {
				present |= 1 << i
				files[i] = b
			}
		}
		f.Add(present, files[0], files[1], files[2], files[3], files[4], files[5], files[6], files[7])
	}
	// One root for all inputs, each input writing or removing every file: creating
	// and deleting a directory tree per input costs milliseconds on a disk.
	root := f.TempDir()
	for _, p := range detectFiles {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, present uint8, compat, model, ranges, addrCells, rev, cpuinfo, boot, boot0 []byte) {
		fix := fixture{}
		for i, b := range [...][]byte{compat, model, ranges, addrCells, rev, cpuinfo, boot, boot0} {
			path := filepath.Join(root, detectFiles[i])
			if present&(1<<i) == 0 {
				if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
					t.Fatal(err)
				}
				continue
			}
			fix[detectFiles[i]] = b
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		b, err := Detect(root)
		again, err2 := Detect(root)
		if b != again || fmt.Sprint(err) != fmt.Sprint(err2) {
			t.Fatalf("Detect is not deterministic: %+v, %v then %+v, %v", b, err, again, err2)
		}
		_, knownSoC := processorFromCompatible(fix[pathCompatible])
		if err != nil {
			checkDetectError(t, err, present&1 != 0 && knownSoC)
			return
		}
		wantBase := map[SoC]uint32{SoCBCM2835: PeriBaseBCM2835, SoCBCM2836: PeriBaseBCM2836, SoCBCM2837: PeriBaseBCM2836, SoCBCM2711: PeriBaseBCM2711}
		switch {
		case !knownSoC || present&(1<<2) == 0:
			t.Fatalf("accepted without a Pi SoC in compatible or without soc/ranges: %+v", b)
		case b.PeriBase == 0 || b.PeriBase != wantBase[b.SoC]:
			t.Fatalf("%v with peripherals at %#x", b.SoC, b.PeriBase)
		case b.NumGPIO != b.SoC.NumGPIO():
			t.Fatalf("%v with %d GPIOs", b.SoC, b.NumGPIO)
		case b.CoreClockMinHz == 0 || b.CoreClockMinHz > b.CoreClockMaxHz:
			t.Fatalf("core clock range %d..%d", b.CoreClockMinHz, b.CoreClockMaxHz)
		case b.Model == "" || b.Revision > 0xFFFFFF || b.Type < -1:
			t.Fatalf("model %q revision %#x type %d", b.Model, b.Revision, b.Type)
		case len(ranges) < 12 || binary.BigEndian.Uint32(ranges) != BusBase:
			t.Fatalf("accepted soc/ranges % x", ranges)
		}
	})
}

// checkDetectError: a refusal is one of Detect's three error types, each telling
// the user what to do; NotPiError exactly when compatible names no Pi SoC.
func checkDetectError(t *testing.T, err error, piSoC bool) {
	t.Helper()
	var notPi *NotPiError
	var unsupported *UnsupportedBoardError
	var signal *SignalError
	msg := err.Error()
	switch {
	case errors.As(err, &notPi):
		if piSoC || notPi.Reason == "" || !strings.HasSuffix(msg, "; use hardware.backend: sim to try it elsewhere") {
			t.Fatalf("NotPiError with a Pi SoC in compatible = %v: %q", piSoC, msg)
		}
	case errors.As(err, &unsupported):
		if !piSoC || unsupported.Model == "" || !strings.Contains(msg, "hardware.backend: sim") {
			t.Fatalf("UnsupportedBoardError %q", msg)
		}
	case errors.As(err, &signal):
		if !piSoC || signal.Model == "" || signal.Detail == "" || !strings.Contains(msg, "refusing to map registers at a guessed address") {
			t.Fatalf("SignalError %q", msg)
		}
	default:
		t.Fatalf("error %T: %v", err, err)
	}
}

// FuzzParseRanges: soc/ranges either gives the address its first entry maps bus
// address 0x7E000000 to, or an error naming the file; ranges built from an address
// read back as that address, with one parent cell or two.
func FuzzParseRanges(f *testing.F) {
	f.Add(rangesBCM2835, 1)
	f.Add(rangesBCM2711, 2)
	f.Add(rangesBCM2711High, 0)
	f.Fuzz(func(t *testing.T, b []byte, parentCells int) {
		base, err := parseRanges(b, parentCells)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "/"+pathRanges+" ") && !strings.HasPrefix(msg, "/"+pathAddrCells+": ") {
				t.Fatalf("error %q names neither soc/ranges nor #address-cells", msg)
			}
		} else {
			cell := func(i int) uint64 { return uint64(binary.BigEndian.Uint32(b[4*i:])) }
			if len(b) < 12 || len(b)%4 != 0 || cell(0) != BusBase || (base != cell(1) && base != cell(1)<<32|cell(2)) {
				t.Fatalf("parseRanges(% x, %d) = %#x", b, parentCells, base)
			}
		}

		var hi, lo uint32
		if len(b) >= 8 {
			hi, lo = binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])
		}
		if got, err := parseRanges(cells(BusBase, lo, 0x01000000), 1); err != nil || got != uint64(lo) {
			t.Fatalf("one cell %#x read as %#x, %v", lo, got, err)
		}
		if got, err := parseRanges(cells(BusBase, hi, lo, 0x01800000), 2); err != nil || got != uint64(hi)<<32|uint64(lo) {
			t.Fatalf("two cells %#x %#x read as %#x, %v", hi, lo, got, err)
		}
	})
}

// FuzzSPI0Device: a sysfs platform device name is SPI0 only as "<hex address>.spi"
// with SPI0's ARM or bus address; the names the kernel gives read as their address.
func FuzzSPI0Device(f *testing.F) {
	f.Add("3f204000.spi", uint64(PeriBaseBCM2836))
	f.Add("7e204000.spi", uint64(PeriBaseBCM2711))
	f.Add("fe215080.spi", uint64(PeriBaseBCM2711))
	f.Fuzz(func(t *testing.T, name string, peri uint64) {
		spi0 := peri + SPI0Offset
		if spi0Device(name, spi0) {
			addr, ok := strings.CutSuffix(name, ".spi")
			if !ok || strings.Contains(addr, ".") {
				t.Fatalf("%q taken for SPI0 (%#x)", name, spi0)
			}
		}
		for _, a := range []uint64{spi0, BusBase + SPI0Offset, peri} {
			want := a == spi0 || a == BusBase+SPI0Offset
			for _, n := range []string{fmt.Sprintf("%x.spi", a), fmt.Sprintf("%X.spi", a), fmt.Sprintf("%016x.spi", a)} {
				if got := spi0Device(n, spi0); got != want {
					t.Fatalf("spi0Device(%q, %#x) = %v", n, spi0, got)
				}
			}
			if spi0Device(fmt.Sprintf("%x.i2c", a), spi0) {
				t.Fatalf("an i2c device at %#x taken for SPI0", a)
			}
		}
	})
}
