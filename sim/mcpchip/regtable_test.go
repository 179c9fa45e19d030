package mcpchip

import (
	"fmt"
	"testing"
)

// resetValue is one register's value after power-on and after RESET: the bits set in
// defined read as in value; the others are unknown ('x') in the datasheet.
type resetValue struct {
	name           string
	value, defined uint8
}

// datasheetResetTable is the MCP2515's register file 0x00..0x7F with every register's
// reset value, typed in from the MCP2515 datasheet DS20001801J: the addresses from
// table 11-1 (CAN CONTROLLER REGISTER MAP), the values from table 11-2 (CONTROL
// REGISTER SUMMARY, column "POR/RST Value") and, for the buffers, filters and masks it
// does not list, from their register descriptions (registers 3-3..3-8 TXBn, 4-4..4-9
// RXBn, 4-10..4-13 RXFn: R/W-x or R-x; 4-14..4-17 RXMn: R/W-0). Unimplemented bits
// ('-') read as '0'. Table 11-1 has no gaps: each row of 16 addresses ends with
// CANSTAT (xEh) and CANCTRL (xFh), so all 128 addresses are defined.
//
// It is written with literals on purpose: neither the model's nor the driver's
// constants, so a wrong address or value in either shows here.
func datasheetResetTable() [128]resetValue {
	var t [128]resetValue
	set := func(a int, name string, value, defined uint8) { t[a] = resetValue{name, value, defined} }
	filter := func(a, n int) { // RXFnSIDH, SIDL (xxx- x-xx), EID8, EID0: all x
		set(a, fmt.Sprintf("RXF%dSIDH", n), 0, 0)
		set(a+1, fmt.Sprintf("RXF%dSIDL", n), 0, 0x14)
		set(a+2, fmt.Sprintf("RXF%dEID8", n), 0, 0)
		set(a+3, fmt.Sprintf("RXF%dEID0", n), 0, 0)
	}
	mask := func(a, n int) { // RXMnSIDH, SIDL (000- --00), EID8, EID0: all 0
		for i, r := range []string{"SIDH", "SIDL", "EID8", "EID0"} {
			set(a+i, fmt.Sprintf("RXM%d%s", n, r), 0, 0xFF)
		}
	}
	buffer := func(a int, p string, sidl, dlc uint8) { // CTRL (0), then the frame: x
		set(a, p+"CTRL", 0, 0xFF) // TXBnCTRL -000 0-00; RXBnCTRL -00- 0000
		set(a+1, p+"SIDH", 0, 0)
		set(a+2, p+"SIDL", 0, sidl)
		set(a+3, p+"EID8", 0, 0)
		set(a+4, p+"EID0", 0, 0)
		set(a+5, p+"DLC", 0, dlc)
		for d := 0; d < 8; d++ {
			set(a+6+d, fmt.Sprintf("%sD%d", p, d), 0, 0)
		}
	}
	filter(0x00, 0)
	filter(0x04, 1)
	filter(0x08, 2)
	set(0x0C, "BFPCTRL", 0x00, 0xFF)   // --00 0000
	set(0x0D, "TXRTSCTRL", 0x00, 0xC7) // --xx x000: BnRTS are the pins' levels
	filter(0x10, 3)
	filter(0x14, 4)
	filter(0x18, 5)
	set(0x1C, "TEC", 0x00, 0xFF)
	set(0x1D, "REC", 0x00, 0xFF)
	mask(0x20, 0)
	mask(0x24, 1)
	set(0x28, "CNF3", 0x00, 0xFF) // 00-- -000
	set(0x29, "CNF2", 0x00, 0xFF)
	set(0x2A, "CNF1", 0x00, 0xFF)
	set(0x2B, "CANINTE", 0x00, 0xFF)
	set(0x2C, "CANINTF", 0x00, 0xFF)
	set(0x2D, "EFLG", 0x00, 0xFF)
	buffer(0x30, "TXB0", 0x14, 0xB0) // SIDL xxx- x-xx, DLC -x-- xxxx
	buffer(0x40, "TXB1", 0x14, 0xB0)
	buffer(0x50, "TXB2", 0x14, 0xB0)
	buffer(0x60, "RXB0", 0x04, 0x80) // SIDL xxxx x-xx, DLC -xxx xxxx
	buffer(0x70, "RXB1", 0x04, 0x80)
	for row := 0; row < 0x80; row += 0x10 {
		set(row+0x0E, "CANSTAT", 0x80, 0xFF) // 100- 000-: Configuration mode, no interrupt
		set(row+0x0F, "CANCTRL", 0x87, 0xFF) // 1000 0111
	}
	return t
}

// checkResetTable reads every register with its own READ instruction (0x03, address,
// one data byte) and compares its defined bits with the table.
func checkResetTable(t *testing.T, r *rig, when string) {
	t.Helper()
	for a, want := range datasheetResetTable() {
		if want.name == "" {
			t.Fatalf("table has no register at %#02x", a)
		}
		got := r.xfer(0x03, uint8(a), 0)[2]
		if got&want.defined != want.value {
			t.Errorf("%s: %s (%#02x) = %08b, want %08b in the bits %08b", when, want.name, a, got, want.value, want.defined)
		}
	}
}

func TestRegisterFileMatchesDatasheetAfterPowerOnAndRESET(t *testing.T) {
	r := newRig(t, nil)
	checkResetTable(t, r, "after power-on")

	// Put something into every register that can hold it: a WRITE of 0xFF across
	// 0x00..0x7F in Configuration mode (CANCTRL's REQOP 111 is reserved: the mode
	// stays), then sane bit timing and a looped-back frame to fill RXB0 and the flags.
	fill := make([]byte, 2+128)
	fill[0], fill[1] = 0x02, 0x00
	for i := range fill[2:] {
		fill[2+i] = 0xFF
	}
	r.xfer(fill...)
	r.xfer(0x02, 0x28, 0x01, 0xB5, 0x00) // CNF3..CNF1: 500 kbit/s at 16 MHz
	r.xfer(0x02, 0x60, 0x64)             // RXB0CTRL: any message, rollover
	r.xfer(0x02, 0x0F, 0x40)             // CANCTRL: Loopback, ABAT clear
	r.xfer(0x81)                         // RTS TXB0
	r.wait(1_000_000)
	if got := r.xfer(0x03, 0x2C, 0)[2]; got&0x05 != 0x05 {
		t.Fatalf("CANINTF = %#02x after the looped-back frame, want TX0IF and RX0IF", got)
	}

	// RESET must have something to undo: these registers' defined bits differ now.
	table := datasheetResetTable()
	for _, a := range []uint8{0x0C, 0x0D, 0x0E, 0x0F, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,
		0x28, 0x29, 0x2B, 0x2C, 0x30, 0x40, 0x50, 0x60, 0x70} {
		if got := r.xfer(0x03, a, 0)[2]; got&table[a].defined == table[a].value {
			t.Fatalf("%s (%#02x) = %#02x before RESET: the fill did not change it", table[a].name, a, got)
		}
	}

	r.xfer(0xC0)                      // RESET
	r.at += 128 * 1_000_000_000 / osc // oscillator start-up: 128 OSC1 cycles (§8.1)
	checkResetTable(t, r, "after RESET")
}
