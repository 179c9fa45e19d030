package bcm2835

import (
	"errors"
	"testing"
)

const mhz = 1_000_000

func TestDetectBoardFamilies(t *testing.T) {
	tests := []struct {
		name string
		fix  fixture
		want Board
	}{
		{"Pi Zero (BCM2835)", fixPiZero, Board{
			Model: "Raspberry Pi Zero Rev 1.3", SoC: SoCBCM2835, Revision: 0x900092, Type: 0x09,
			PeriBase: 0x20000000, NumGPIO: 54, CoreClockMinHz: 250 * mhz, CoreClockMaxHz: 400 * mhz}},
		{"Pi 1 B+ old-style code (BCM2835)", fixPi1BPlus, Board{
			Model: "Raspberry Pi Model B Plus Rev 1.2", SoC: SoCBCM2835, Revision: 0x10, Type: -1,
			PeriBase: 0x20000000, NumGPIO: 54, CoreClockMinHz: 250 * mhz, CoreClockMaxHz: 250 * mhz}},
		{"Pi 2 (BCM2836)", fixPi2, Board{
			Model: "Raspberry Pi 2 Model B Rev 1.1", SoC: SoCBCM2836, Revision: 0xA01041, Type: 0x04,
			PeriBase: 0x3F000000, NumGPIO: 54, CoreClockMinHz: 250 * mhz, CoreClockMaxHz: 250 * mhz}},
		{"Pi 3 (BCM2837)", fixPi3, Board{
			Model: "Raspberry Pi 3 Model B Rev 1.2", SoC: SoCBCM2837, Revision: 0xA02082, Type: 0x08,
			PeriBase: 0x3F000000, NumGPIO: 54, CoreClockMinHz: 250 * mhz, CoreClockMaxHz: 400 * mhz}},
		{"Zero 2 W (BCM2837)", fixZero2W, Board{
			Model: "Raspberry Pi Zero 2 W Rev 1.0", SoC: SoCBCM2837, Revision: 0x902120, Type: 0x12,
			PeriBase: 0x3F000000, NumGPIO: 54, CoreClockMinHz: 250 * mhz, CoreClockMaxHz: 400 * mhz}},
		{"Pi 4 (BCM2711)", fixPi4, Board{
			Model: "Raspberry Pi 4 Model B Rev 1.1", SoC: SoCBCM2711, Revision: 0xC03111, Type: 0x11,
			PeriBase: 0xFE000000, NumGPIO: 58, CoreClockMinHz: 200 * mhz, CoreClockMaxHz: 500 * mhz,
			CoreClockNote: "550 MHz instead if hdmi_enable_4kp60=1 is set"}},
		{"Pi 400 (BCM2711)", fixPi400, Board{
			Model: "Raspberry Pi 400 Rev 1.0", SoC: SoCBCM2711, Revision: 0xC03130, Type: 0x13,
			PeriBase: 0xFE000000, NumGPIO: 58, CoreClockMinHz: 200 * mhz, CoreClockMaxHz: 500 * mhz,
			CoreClockNote: "550 MHz instead if hdmi_enable_4kp60=1 is set"}},
		{"CM4 (BCM2711)", fixCM4, Board{
			Model: "Raspberry Pi Compute Module 4 Rev 1.0", SoC: SoCBCM2711, Revision: 0xB03140, Type: 0x14,
			PeriBase: 0xFE000000, NumGPIO: 58, CoreClockMinHz: 200 * mhz, CoreClockMaxHz: 500 * mhz,
			CoreClockNote: "550 MHz instead if hdmi_enable_4kp60=1 is set"}},

		// Variants of the signals.
		{"Pi 3 revision from /proc/cpuinfo, downstream compatible",
			fixPi3.with(pathDTRevision, nil).with(pathCPUInfo, []byte(cpuinfoPi3)).
				with(pathCompatible, nul("raspberrypi,3-model-b", "brcm,bcm2710", "brcm,bcm2709")),
			Board{Model: "Raspberry Pi 3 Model B Rev 1.2", SoC: SoCBCM2837, Revision: 0xA02082, Type: 0x08,
				PeriBase: 0x3F000000, NumGPIO: 54, CoreClockMinHz: 250 * mhz, CoreClockMaxHz: 400 * mhz}},
		{"Pi 1 B, warranty bit in cpuinfo, no model file, bcm2708",
			fixture{pathCompatible: nul("brcm,bcm2708"), pathRanges: rangesBCM2835, pathCPUInfo: []byte(cpuinfoPi1B)},
			Board{Model: "this board", SoC: SoCBCM2835, Revision: 0x0E, Type: -1,
				PeriBase: 0x20000000, NumGPIO: 54, CoreClockMinHz: 250 * mhz, CoreClockMaxHz: 250 * mhz}},
		{"Pi 2 v1.2: revision says BCM2837, downstream tree says bcm2709",
			fixPi2.with(pathDTRevision, cells(0xA22042)).with(pathCompatible, nul("raspberrypi,2-model-b", "brcm,bcm2709")),
			Board{Model: "Raspberry Pi 2 Model B Rev 1.1", SoC: SoCBCM2837, Revision: 0xA22042, Type: 0x04,
				PeriBase: 0x3F000000, NumGPIO: 54, CoreClockMinHz: 250 * mhz, CoreClockMaxHz: 250 * mhz}},
		{"Pi 4 without #address-cells (two-cell heuristic)", fixPi4.with(pathAddrCells, nil), Board{
			Model: "Raspberry Pi 4 Model B Rev 1.1", SoC: SoCBCM2711, Revision: 0xC03111, Type: 0x11,
			PeriBase: 0xFE000000, NumGPIO: 58, CoreClockMinHz: 200 * mhz, CoreClockMaxHz: 500 * mhz,
			CoreClockNote: "550 MHz instead if hdmi_enable_4kp60=1 is set"}},
		{"Pi 3 without #address-cells", fixPi3.with(pathAddrCells, nil), Board{
			Model: "Raspberry Pi 3 Model B Rev 1.2", SoC: SoCBCM2837, Revision: 0xA02082, Type: 0x08,
			PeriBase: 0x3F000000, NumGPIO: 54, CoreClockMinHz: 250 * mhz, CoreClockMaxHz: 400 * mhz}},
		{"Pi 4 with hdmi_enable_4kp60",
			fixPi4.with(pathBootConfig, []byte("# 4K\n[pi4]\nhdmi_enable_4kp60=1\n[all]\ndtparam=spi=off\n")), Board{
				Model: "Raspberry Pi 4 Model B Rev 1.1", SoC: SoCBCM2711, Revision: 0xC03111, Type: 0x11,
				PeriBase: 0xFE000000, NumGPIO: 58, CoreClockMinHz: 200 * mhz, CoreClockMaxHz: 550 * mhz,
				CoreClockNote: "hdmi_enable_4kp60=1 in config.txt raises the core clock to 550 MHz"}},
		{"Pi 4 with hdmi_enable_4kp60 commented out",
			fixPi4.with(pathBootConfig0, []byte("#hdmi_enable_4kp60=1\n")), Board{
				Model: "Raspberry Pi 4 Model B Rev 1.1", SoC: SoCBCM2711, Revision: 0xC03111, Type: 0x11,
				PeriBase: 0xFE000000, NumGPIO: 58, CoreClockMinHz: 200 * mhz, CoreClockMaxHz: 500 * mhz,
				CoreClockNote: "550 MHz instead if hdmi_enable_4kp60=1 is set"}},
		{"Pi 3 without any revision code: widest BCM2837 range",
			fixPi3.with(pathDTRevision, nil), Board{
				Model: "Raspberry Pi 3 Model B Rev 1.2", SoC: SoCBCM2837, Type: -1,
				PeriBase: 0x3F000000, NumGPIO: 54, CoreClockMinHz: 250 * mhz, CoreClockMaxHz: 400 * mhz,
				CoreClockNote: "board type unknown: widest BCM2837 range assumed"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Detect(tc.fix.write(t))
			if err != nil {
				t.Fatalf("Detect: %v", err)
			}
			if got != tc.want {
				t.Errorf("Detect =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestDetectRefusals(t *testing.T) {
	const sim = "; use hardware.backend: sim to try it elsewhere"
	const report = "; refusing to map registers at a guessed address (use hardware.backend: sim, and " +
		"report the board with the contents of /proc/device-tree/compatible, " +
		"/proc/device-tree/soc/ranges and the Revision line of /proc/cpuinfo)"
	tests := []struct {
		name    string
		fix     fixture
		msg     string
		errType any
	}{
		{"no device tree (an x86 PC)", fixture{pathCPUInfo: []byte("processor\t: 0\nvendor_id\t: GenuineIntel\n")},
			"cand's bcm2835 backend needs a Raspberry Pi (BCM2835/2836/2837/2711): no device tree " +
				"(/proc/device-tree/compatible is missing)" + sim, &NotPiError{}},
		{"another ARM board", fixture{pathCompatible: nul("pine64,rockpro64", "rockchip,rk3399"), pathModel: nul("Pine64 RockPro64")},
			"cand's bcm2835 backend needs a Raspberry Pi (BCM2835/2836/2837/2711): the device tree's " +
				"compatible \"pine64,rockpro64, rockchip,rk3399\" names no Raspberry Pi SoC" + sim, &NotPiError{}},
		{"Pi 5", fixPi5,
			"Raspberry Pi 5 Model B Rev 1.0 (BCM2712) is not supported: on the Pi 5 family the header's GPIO " +
				"and SPI live in the RP1 I/O controller behind PCIe, not in the BCM2835 SPI0/GPIO registers cand " +
				"drives, and every RP1 register access is a PCIe round trip; use the kernel's mcp251x driver " +
				"there, or hardware.backend: sim", &UnsupportedBoardError{}},
		{"Pi 5 revision code under a Pi 4 device tree", fixPi4.with(pathDTRevision, cells(0xC04170)),
			"Raspberry Pi 4 Model B Rev 1.1 (BCM2712) is not supported: on the Pi 5 family the header's GPIO " +
				"and SPI live in the RP1 I/O controller behind PCIe, not in the BCM2835 SPI0/GPIO registers cand " +
				"drives, and every RP1 register access is a PCIe round trip; use the kernel's mcp251x driver " +
				"there, or hardware.backend: sim", &UnsupportedBoardError{}},
		{"unknown processor in the revision code", fixPi4.with(pathDTRevision, cells(0xC05170)),
			"Raspberry Pi 4 Model B Rev 1.1 reports processor 5 in its revision code, an SoC cand does not " +
				"know: refusing to map registers at a guessed address; use hardware.backend: sim",
			&UnsupportedBoardError{}},
		{"device tree and revision code disagree", fixPi4.with(pathDTRevision, cells(0xA02082)),
			"Raspberry Pi 4 Model B Rev 1.1: the device tree says BCM2711 but revision code a02082 says BCM2837" +
				report, &SignalError{}},
		{"unknown old-style revision code", fixPi1BPlus.with(pathDTRevision, cells(0x0042)),
			"Raspberry Pi Model B Plus Rev 1.2: revision code 0042 is neither a known old-style code nor a " +
				"new-style one" + report, &SignalError{}},
		{"Pi 4 in high-peripheral mode", fixPi4.with(pathRanges, rangesBCM2711High),
			"Raspberry Pi 4 Model B Rev 1.1: /proc/device-tree/soc/ranges maps the peripherals at 0x47e000000, " +
				"but a BCM2711 has them at 0xfe000000 (is arm_peri_high=1 set in config.txt? remove it)" + report,
			&SignalError{}},
		{"ranges base from another SoC", fixPi3.with(pathRanges, rangesBCM2835),
			"Raspberry Pi 3 Model B Rev 1.2: /proc/device-tree/soc/ranges maps the peripherals at 0x20000000, " +
				"but a BCM2837 has them at 0x3f000000" + report, &SignalError{}},
		{"ranges for another bus address", fixPi3.with(pathRanges, cells(0x7C000000, 0x3F000000, 0x01000000)),
			"Raspberry Pi 3 Model B Rev 1.2: /proc/device-tree/soc/ranges starts with bus address 0x7c000000, " +
				"want 0x7e000000" + report, &SignalError{}},
		{"short ranges", fixPi3.with(pathRanges, cells(0x7E000000)),
			"Raspberry Pi 3 Model B Rev 1.2: /proc/device-tree/soc/ranges has 4 bytes, want at least 12 (3 cells)" +
				report, &SignalError{}},
		{"no ranges", fixPi3.with(pathRanges, nil),
			"Raspberry Pi 3 Model B Rev 1.2: cannot read the peripheral base: open ",
			&SignalError{}},
		{"odd revision property", fixPi3.with(pathDTRevision, []byte{0xA0, 0x20}),
			"Raspberry Pi 3 Model B Rev 1.2: /proc/device-tree/system/linux,revision has 2 bytes, want 4" + report,
			&SignalError{}},
		{"cpuinfo revision not hex", fixPi3.with(pathDTRevision, nil).with(pathCPUInfo, []byte("Revision\t: zz\n")),
			"Raspberry Pi 3 Model B Rev 1.2: /proc/cpuinfo Revision \"zz\" is not hexadecimal" + report,
			&SignalError{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := tc.fix.write(t)
			_, err := Detect(root)
			if err == nil {
				t.Fatal("Detect accepted the board")
			}
			msg := err.Error()
			if tc.name == "no ranges" { // the OS error names the temp path
				if len(msg) < len(tc.msg) || msg[:len(tc.msg)] != tc.msg {
					t.Fatalf("error\n%s\nwant prefix\n%s", msg, tc.msg)
				}
			} else if msg != tc.msg {
				t.Fatalf("error\n%s\nwant\n%s", msg, tc.msg)
			}
			switch tc.errType.(type) {
			case *NotPiError:
				var e *NotPiError
				if !errors.As(err, &e) {
					t.Errorf("error is %T, want *NotPiError", err)
				}
			case *UnsupportedBoardError:
				var e *UnsupportedBoardError
				if !errors.As(err, &e) {
					t.Errorf("error is %T, want *UnsupportedBoardError", err)
				}
			case *SignalError:
				var e *SignalError
				if !errors.As(err, &e) {
					t.Errorf("error is %T, want *SignalError", err)
				}
			}
		})
	}
}

func TestParseRangesCells(t *testing.T) {
	tests := []struct {
		b     []byte
		cells int
		want  uint64
	}{
		{rangesBCM2835, 1, 0x20000000},
		{rangesBCM2836, 1, 0x3F000000},
		{rangesBCM2711, 2, 0xFE000000},
		{rangesBCM2711High, 2, 0x47E000000},
		{rangesBCM2711High, 0, 0x4},         // without #address-cells the high half looks like a base...
		{rangesBCM2711, 0, 0xFE000000},      // ...but a zero high half is read as two cells
		{rangesBCM2836[:12], 0, 0x3F000000}, // single entry, one cell
	}
	for i, tc := range tests {
		got, err := parseRanges(tc.b, tc.cells)
		if err != nil || got != tc.want {
			t.Errorf("%d: parseRanges = %#x, %v; want %#x", i, got, err, tc.want)
		}
	}
	if _, err := parseRanges(rangesBCM2711, 3); err == nil ||
		err.Error() != "/proc/device-tree/#address-cells: 3 parent address cells is not a Raspberry Pi layout" {
		t.Errorf("3 cells: %v", err)
	}
}
