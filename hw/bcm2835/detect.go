package bcm2835

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Board is what Detect learned about the Raspberry Pi it runs on.
type Board struct {
	Model    string // /proc/device-tree/model (human text, for messages only)
	SoC      SoC    // BCM2835/2836/2837/2711 (pass to NewGPIO)
	Revision uint32 // board revision code (bits 0..23); 0 if the firmware gave none
	Type     int    // board type field of a new-style revision code; -1 if unknown
	PeriBase uint32 // ARM physical address of the peripherals (0x7E000000 on the bus)
	NumGPIO  int    // GPIOs the SoC has (54 or 58)
	// CoreClockMinHz..CoreClockMaxHz is the range the firmware may move the VPU core
	// clock (which SPI0 divides) through at run time unless core_freq is pinned
	// (raspberrypi/documentation config_txt/overclocking.adoc defaults). Size SPI
	// dividers for the maximum so SCLK never exceeds the request.
	CoreClockMinHz uint32
	CoreClockMaxHz uint32
	// CoreClockNote explains the range when it is not the plain table value.
	CoreClockNote string
}

// Processor field values of a new-style revision code (bits 12..15).
const (
	procBCM2835 = 0
	procBCM2836 = 1
	procBCM2837 = 2
	procBCM2711 = 3
	procBCM2712 = 4 // Pi 5, 500, CM5: refused (GPIO and SPI are in RP1)
)

// socFromProcessor maps a revision code's processor field to the SoC; ok is false
// for BCM2712 and anything newer.
func socFromProcessor(p int) (SoC, bool) {
	switch p {
	case procBCM2835:
		return SoCBCM2835, true
	case procBCM2836:
		return SoCBCM2836, true
	case procBCM2837:
		return SoCBCM2837, true
	case procBCM2711:
		return SoCBCM2711, true
	}
	return SoCUnknown, false
}

// periBase is the peripheral base every board with this SoC uses (low-peripheral
// mode on the BCM2711); 0 for an unknown SoC.
func periBase(s SoC) uint32 {
	switch s {
	case SoCBCM2835:
		return PeriBaseBCM2835
	case SoCBCM2836, SoCBCM2837:
		return PeriBaseBCM2836
	case SoCBCM2711:
		return PeriBaseBCM2711
	}
	return 0
}

// Device tree and procfs paths, relative to the root Detect is given.
const (
	pathCompatible  = "proc/device-tree/compatible"
	pathModel       = "proc/device-tree/model"
	pathRanges      = "proc/device-tree/soc/ranges"
	pathAddrCells   = "proc/device-tree/#address-cells"
	pathDTRevision  = "proc/device-tree/system/linux,revision"
	pathCPUInfo     = "proc/cpuinfo"
	pathBootConfig  = "boot/firmware/config.txt" // Raspberry Pi OS bookworm and later
	pathBootConfig0 = "boot/config.txt"          // older releases
)

// NotPiError: the machine is not a Raspberry Pi cand's register backend knows.
type NotPiError struct {
	Reason string
}

func (e *NotPiError) Error() string {
	return "cand's bcm2835 backend needs a Raspberry Pi (BCM2835/2836/2837/2711): " +
		e.Reason + "; use hardware.backend: sim to try it elsewhere"
}

// UnsupportedBoardError: a Raspberry Pi whose SPI and GPIO are not the BCM2835
// blocks (Pi 5 family, processor BCM2712) or whose SoC is newer than this code.
type UnsupportedBoardError struct {
	Model     string
	Processor int // revision-code processor number (4 = BCM2712)
}

func (e *UnsupportedBoardError) Error() string {
	if e.Processor == procBCM2712 {
		return e.Model + " (BCM2712) is not supported: on the Pi 5 family the header's " +
			"GPIO and SPI live in the RP1 I/O controller behind PCIe, not in the BCM2835 " +
			"SPI0/GPIO registers cand drives, and every RP1 register access is a PCIe " +
			"round trip; use the kernel's mcp251x driver there, or hardware.backend: sim"
	}
	return fmt.Sprintf("%s reports processor %d in its revision code, an SoC cand does not "+
		"know: refusing to map registers at a guessed address; use hardware.backend: sim",
		e.Model, e.Processor)
}

// SignalError: the board's own descriptions disagree or name an address cand
// does not know, so no peripheral base can be trusted.
type SignalError struct {
	Model  string
	Detail string
}

func (e *SignalError) Error() string {
	return e.Model + ": " + e.Detail + "; refusing to map registers at a guessed address " +
		"(use hardware.backend: sim, and report the board with the contents of " +
		"/proc/device-tree/compatible, /proc/device-tree/soc/ranges and the Revision line " +
		"of /proc/cpuinfo)"
}

// Detect identifies the Raspberry Pi from files under root ("" means "/"): the
// device tree's compatible string and soc/ranges (both required) and the board
// revision code (device tree or /proc/cpuinfo; used for the board type and, when
// present, checked against the others). Anything unknown or inconsistent is refused.
func Detect(root string) (Board, error) {
	if root == "" {
		root = "/"
	}
	b := Board{Model: readModel(root), Type: -1}

	compat, err := os.ReadFile(filepath.Join(root, pathCompatible))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Board{}, &NotPiError{Reason: "no device tree (/" + pathCompatible + " is missing)"}
		}
		return Board{}, &NotPiError{Reason: "cannot read the device tree: " + err.Error()}
	}
	proc, ok := processorFromCompatible(compat)
	if !ok {
		return Board{}, &NotPiError{Reason: fmt.Sprintf("the device tree's compatible %q names no Raspberry Pi SoC",
			strings.Join(splitNUL(compat), ", "))}
	}
	if proc == procBCM2712 {
		return Board{}, &UnsupportedBoardError{Model: b.Model, Processor: proc}
	}

	rev, haveRev, err := readRevision(root)
	if err != nil {
		return Board{}, &SignalError{Model: b.Model, Detail: err.Error()}
	}
	if haveRev {
		rproc, typ, err := decodeRevision(rev)
		if err != nil {
			return Board{}, &SignalError{Model: b.Model, Detail: err.Error()}
		}
		if _, known := socFromProcessor(rproc); !known {
			return Board{}, &UnsupportedBoardError{Model: b.Model, Processor: rproc}
		}
		if !sameFamily(proc, rproc) {
			dt, _ := socFromProcessor(proc)
			rs, _ := socFromProcessor(rproc)
			return Board{}, &SignalError{Model: b.Model, Detail: fmt.Sprintf(
				"the device tree says %s but revision code %06x says %s", dt, rev, rs)}
		}
		proc = rproc // the revision code is exact (a Pi 2 v1.2 has a BCM2837)
		b.Revision, b.Type = rev, typ
	}
	b.SoC, _ = socFromProcessor(proc)

	ranges, err := os.ReadFile(filepath.Join(root, pathRanges))
	if err != nil {
		return Board{}, &SignalError{Model: b.Model, Detail: "cannot read the peripheral base: " + err.Error()}
	}
	base, err := parseRanges(ranges, readCells(root))
	if err != nil {
		return Board{}, &SignalError{Model: b.Model, Detail: err.Error()}
	}
	if want := uint64(periBase(b.SoC)); base != want {
		d := fmt.Sprintf("/%s maps the peripherals at %#x, but a %s has them at %#x", pathRanges, base, b.SoC, want)
		if b.SoC == SoCBCM2711 {
			d += " (is arm_peri_high=1 set in config.txt? remove it)"
		}
		return Board{}, &SignalError{Model: b.Model, Detail: d}
	}
	b.PeriBase = uint32(base)
	b.NumGPIO = b.SoC.NumGPIO()
	b.CoreClockMinHz, b.CoreClockMaxHz, b.CoreClockNote = coreClock(b.SoC, b.Type, haveRev)
	if b.SoC == SoCBCM2711 && bootConfigSets(root, "hdmi_enable_4kp60", "1") {
		b.CoreClockMaxHz = 550_000_000
		b.CoreClockNote = "hdmi_enable_4kp60=1 in config.txt raises the core clock to 550 MHz"
	}
	return b, nil
}

// FromRevision is the board that revision code rev (bits 0..23) names, as Detect
// would report it but for what only the device tree tells (Model is left empty):
// its SoC, board type, peripheral base, GPIO count and core clock range. The
// virtual Pi plays boards by their revision code.
func FromRevision(rev uint32) (Board, error) {
	rev &= revCodeMask
	proc, typ, err := decodeRevision(rev)
	if err != nil {
		return Board{}, err
	}
	soc, ok := socFromProcessor(proc)
	if !ok {
		return Board{}, &UnsupportedBoardError{Model: fmt.Sprintf("revision %06x", rev), Processor: proc}
	}
	b := Board{SoC: soc, Revision: rev, Type: typ, PeriBase: periBase(soc), NumGPIO: soc.NumGPIO()}
	b.CoreClockMinHz, b.CoreClockMaxHz, b.CoreClockNote = coreClock(soc, typ, true)
	return b, nil
}

// processorFromCompatible finds the SoC in the NUL-separated compatible list,
// accepting the upstream names and the downstream kernels' bcm2708/2709/2710, and
// returns it as a revision-code processor number.
func processorFromCompatible(compat []byte) (int, bool) {
	for _, s := range splitNUL(compat) {
		switch s {
		case "brcm,bcm2835", "brcm,bcm2708":
			return procBCM2835, true
		case "brcm,bcm2836", "brcm,bcm2709":
			return procBCM2836, true
		case "brcm,bcm2837", "brcm,bcm2710":
			return procBCM2837, true
		case "brcm,bcm2711":
			return procBCM2711, true
		case "brcm,bcm2712":
			return procBCM2712, true
		}
	}
	return 0, false
}

// sameFamily: the device tree and the revision code agree. Downstream device
// trees for a Pi 2 v1.2 or a Pi 3 on an old kernel may name the BCM2836/2709
// (same peripheral base as the BCM2837), so those two are accepted either way.
func sameFamily(dt, rev int) bool {
	if dt == rev {
		return true
	}
	return (dt == procBCM2836 || dt == procBCM2837) && (rev == procBCM2836 || rev == procBCM2837)
}

func splitNUL(b []byte) []string {
	var out []string
	for _, f := range bytes.Split(b, []byte{0}) {
		if s := strings.TrimSpace(string(f)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func readModel(root string) string {
	if m, err := os.ReadFile(filepath.Join(root, pathModel)); err == nil {
		if s := strings.TrimSpace(string(bytes.TrimRight(m, "\x00"))); s != "" {
			return s
		}
	}
	if v, ok := cpuinfoField(root, "Model"); ok && v != "" {
		return v
	}
	return "this board"
}

// readRevision returns the revision code from the device tree (4 bytes,
// big-endian) or /proc/cpuinfo's "Revision" line, masked to bits 0..23 (bits 24+
// are warranty/OTP flags). ok is false when neither exists.
func readRevision(root string) (rev uint32, ok bool, err error) {
	if b, err := os.ReadFile(filepath.Join(root, pathDTRevision)); err == nil {
		if len(b) != 4 {
			return 0, false, fmt.Errorf("/%s has %d bytes, want 4", pathDTRevision, len(b))
		}
		return binary.BigEndian.Uint32(b) & revCodeMask, true, nil
	}
	v, found := cpuinfoField(root, "Revision")
	if !found {
		return 0, false, nil
	}
	n, perr := strconv.ParseUint(v, 16, 32)
	if perr != nil {
		return 0, false, fmt.Errorf("/proc/cpuinfo Revision %q is not hexadecimal", v)
	}
	return uint32(n) & revCodeMask, true, nil
}

func cpuinfoField(root, key string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(root, pathCPUInfo))
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// Revision code fields (raspberrypi/documentation computers/raspberry-pi.adoc
// "Raspberry Pi revision codes"; periph rpi/rpi.go; pigpio).
const (
	revCodeMask   = 0xFFFFFF // bits 0..23: the code; the bits above are warranty flags
	revNewStyle   = 1 << 23
	revProcShift  = 12
	revProcMask   = 0xF
	revTypeShift  = 4
	revTypeMask   = 0xFF
	revOldMaxCode = 0x15 // old-style codes 0002..0015 are all BCM2835 boards
)

// Board types (new-style revision code bits 4..11) that matter to the core clock.
const (
	typeA     = 0x00
	typeB     = 0x01
	typeAPlus = 0x02
	typeBPlus = 0x03
	type2B    = 0x04
	typeCM1   = 0x06
	type3B    = 0x08
	typeZero  = 0x09
	typeCM3   = 0x0A
	typeZeroW = 0x0C
	type3BP   = 0x0D
	type3AP   = 0x0E
	typeCM3P  = 0x10
	type4B    = 0x11
	typeZero2 = 0x12
	type400   = 0x13
	typeCM4   = 0x14
	typeCM4S  = 0x15
)

// decodeRevision returns the processor number and (new-style codes only) the
// board type.
func decodeRevision(rev uint32) (proc, typ int, err error) {
	if rev&revNewStyle == 0 {
		if rev < 0x2 || rev > revOldMaxCode {
			return 0, -1, fmt.Errorf("revision code %04x is neither a known old-style code nor a new-style one", rev)
		}
		return procBCM2835, -1, nil
	}
	return int(rev >> revProcShift & revProcMask), int(rev >> revTypeShift & revTypeMask), nil
}

// coreClock returns the core clock range for the board (raspberrypi/documentation
// config_txt/overclocking.adoc: core_freq / core_freq_min defaults). Unknown
// board types get the widest range of their SoC, which keeps SCLK at or below
// the request.
func coreClock(soc SoC, typ int, haveRev bool) (minHz, maxHz uint32, note string) {
	const mhz = 1_000_000
	switch soc {
	case SoCBCM2711:
		return 200 * mhz, 500 * mhz, "550 MHz instead if hdmi_enable_4kp60=1 is set"
	case SoCBCM2835:
		switch typ {
		case typeZero, typeZeroW:
			return 250 * mhz, 400 * mhz, ""
		case typeA, typeB, typeAPlus, typeBPlus, typeCM1:
			return 250 * mhz, 250 * mhz, ""
		}
		if haveRev && typ < 0 { // old-style codes: Pi 1 A/B/A+/B+/CM1
			return 250 * mhz, 250 * mhz, ""
		}
		return 250 * mhz, 400 * mhz, "board type unknown: widest BCM2835 range assumed"
	case SoCBCM2836:
		return 250 * mhz, 250 * mhz, ""
	default: // BCM2837
		if typ == type2B {
			return 250 * mhz, 250 * mhz, "" // Pi 2 v1.2
		}
		switch typ {
		case type3B, type3BP, type3AP, typeZero2, typeCM3, typeCM3P:
			return 250 * mhz, 400 * mhz, ""
		}
		return 250 * mhz, 400 * mhz, "board type unknown: widest BCM2837 range assumed"
	}
}

// readCells returns the root node's #address-cells (the parent address size in
// soc/ranges), or 0 if the file is absent or odd.
func readCells(root string) int {
	b, err := os.ReadFile(filepath.Join(root, pathAddrCells))
	if err != nil || len(b) != 4 {
		return 0
	}
	return int(binary.BigEndian.Uint32(b))
}

// parseRanges returns the ARM physical address the first soc/ranges entry maps bus
// address 0x7E000000 to. Each entry is <child-bus-addr parent-addr... size>, all
// big-endian 32-bit cells; the parent address has parentCells cells (1 on the
// BCM2835/6/7, 2 on the BCM2711). parentCells 0 means unknown: then a zero
// second cell is taken as the high half of a 2-cell address (bcm2835 library,
// go-rpio).
func parseRanges(b []byte, parentCells int) (uint64, error) {
	if len(b) < 12 || len(b)%4 != 0 {
		return 0, fmt.Errorf("/%s has %d bytes, want at least 12 (3 cells)", pathRanges, len(b))
	}
	cell := func(i int) uint32 { return binary.BigEndian.Uint32(b[4*i:]) }
	if bus := cell(0); bus != BusBase {
		return 0, fmt.Errorf("/%s starts with bus address %#x, want %#x", pathRanges, bus, BusBase)
	}
	if parentCells == 0 {
		parentCells = 1
		if cell(1) == 0 && len(b) >= 16 {
			parentCells = 2
		}
	}
	switch parentCells {
	case 1:
		return uint64(cell(1)), nil
	case 2:
		if len(b) < 16 {
			return 0, fmt.Errorf("/%s has %d bytes, want 16 for 2 address cells", pathRanges, len(b))
		}
		return uint64(cell(1))<<32 | uint64(cell(2)), nil
	}
	return 0, fmt.Errorf("/%s: %d parent address cells is not a Raspberry Pi layout", pathAddrCells, parentCells)
}

// bootConfigSets reports whether config.txt (either location) has key=value on
// an uncommented line. Conditional sections are not evaluated: a match anywhere
// counts, which errs toward a higher core clock and so a lower SCLK.
func bootConfigSets(root, key, value string) bool {
	for _, p := range []string{pathBootConfig, pathBootConfig0} {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			line, _, _ = strings.Cut(line, "#")
			k, v, ok := strings.Cut(line, "=")
			if ok && strings.TrimSpace(k) == key && strings.TrimSpace(v) == value {
				return true
			}
		}
	}
	return false
}
