package mcp2515

import "testing"

// The buffer registers and per-buffer bits the register map computes, against the
// MCP2515 datasheet (DS20001801J): table 11-1 (register map), table 12-1 (SPI
// instructions), figure 12-8 (READ STATUS), register 7-1/7-2 (CANINTE/CANINTF).
func TestRegisterFunctionsMatchTheDatasheet(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"TXB0CTRL", int(TXBnCTRL(0)), 0x30},
		{"TXB1CTRL", int(TXBnCTRL(1)), 0x40},
		{"TXB2CTRL", int(TXBnCTRL(2)), 0x50},
		{"RXB0CTRL", int(RXBnCTRL(0)), 0x60},
		{"RXB1CTRL", int(RXBnCTRL(1)), 0x70},
		{"RXF0SIDH", int(RXFnSIDH(0)), 0x00},
		{"RXF1SIDH", int(RXFnSIDH(1)), 0x04},
		{"RXF2SIDH", int(RXFnSIDH(2)), 0x08},
		{"RXF3SIDH", int(RXFnSIDH(3)), 0x10},
		{"RXF4SIDH", int(RXFnSIDH(4)), 0x14},
		{"RXF5SIDH", int(RXFnSIDH(5)), 0x18},
		{"RXM0SIDH", int(RXMnSIDH(0)), 0x20},
		{"RXM1SIDH", int(RXMnSIDH(1)), 0x24},
		{"READ RX BUFFER RXB0", int(ReadRxBuf(0)), 0x90},
		{"READ RX BUFFER RXB1", int(ReadRxBuf(1)), 0x94},
		{"LOAD TX BUFFER TXB0", int(LoadTxBuf(0)), 0x40},
		{"LOAD TX BUFFER TXB1", int(LoadTxBuf(1)), 0x42},
		{"LOAD TX BUFFER TXB2", int(LoadTxBuf(2)), 0x44},
		{"RTS TXB0", int(RTS(0)), 0x81},
		{"RTS TXB1", int(RTS(1)), 0x82},
		{"RTS TXB2", int(RTS(2)), 0x84},
		{"STATUS RX1IF", int(StatusRXnIF(1)), 0x02},
		{"STATUS TXB1REQ", int(StatusTXBnREQ(1)), 0x10},
		{"STATUS TX2IF", int(StatusTXnIF(2)), 0x80},
		{"CANINTF TX1IF", int(IntTXn(1)), 0x08},
		{"TEC..EFLG", ErrorRegsLen, 0x2D - 0x1C + 1},
		{"EFLG from TEC", RegEFLG.From(RegTEC), 0x2D - 0x1C},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#02x, want %#02x", c.name, c.got, c.want)
		}
	}
	// The kernel's probe test (drivers/net/can/spi/mcp251x.c): CANCTRL & 0x17 == 0x07.
	for ctrl := range 256 {
		if got, want := CANCTRLAfterReset(Bits(ctrl)), ctrl&0x17 == 0x07; got != want {
			t.Errorf("CANCTRLAfterReset(%#02x) = %v, want %v", ctrl, got, want)
		}
	}
	if m := OPMOD(0x6E); m != ModeListenOnly {
		t.Errorf("OPMOD(0x6E) = %#02x, want Listen-only", m)
	}
}

// CNF1..CNF3 decode and encode field by field (datasheet registers 5-1..5-3).
func TestCNFFields(t *testing.T) {
	f := DecodeCNF(0xC3, 0xF5, 0x47)
	want := CNF{BRP: 3, SJW: 3, PRSEG: 5, PHSEG1: 6, PHSEG2: 7, SAM: true, BTLMODE: true}
	if f != want {
		t.Fatalf("DecodeCNF(c3 f5 47) = %+v, want %+v", f, want)
	}
	// Encode leaves SOF and WAKFIL (CNF3 bits 7, 6) clear.
	if c1, c2, c3 := f.Encode(); c1 != 0xC3 || c2 != 0xF5 || c3 != 0x07 {
		t.Fatalf("Encode = %02x %02x %02x, want c3 f5 07", c1, c2, c3)
	}
}
