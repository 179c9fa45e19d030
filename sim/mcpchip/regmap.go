package mcpchip

// The chip's register map and instruction set as the silicon defines them, from the
// MCP2515 datasheet DS20001801J (table 11-1 CAN CONTROLLER REGISTER MAP, registers
// 3-1 to 10-2, table 12-1 SPI INSTRUCTION SET). The model declares them itself and
// does not take them from the driver (package mcp2515): a wrong address shared by both
// would go unnoticed. regtable_test.go checks the map against the datasheet's literals.

// SPI instructions (table 12-1).
const (
	instrRESET      = 0xC0 // 1100 0000
	instrREAD       = 0x03 // 0000 0011 addr, data out...
	instrREADRXBUF  = 0x90 // 1001 0nm0: n = RXB1, m = from D0
	instrWRITE      = 0x02 // 0000 0010 addr, data in...
	instrLOADTXBUF  = 0x40 // 0100 0abc: ab = TXB0..2, c = from D0
	instrRTS        = 0x80 // 1000 0nnn: one bit per TX buffer
	instrREADSTATUS = 0xA0 // 1010 0000
	instrRXSTATUS   = 0xB0 // 1011 0000
	instrBITMODIFY  = 0x05 // 0000 0101 addr, mask, data
)

const (
	maxSCLKHz   = 10_000_000 // maximum SPI clock (features list)
	ostCycles   = 128        // oscillator start-up timer, OSC1 cycles (§8.1)
	regFileSize = 0x80       // addresses 0x00..0x7F
)

// READ STATUS bits (figure 12-8): RX0IF, RX1IF in bits 0, 1 as in CANINTF, then
// TXREQ and TXnIF of each TX buffer, two bits per buffer.
const (
	statTXB0REQ = 1 << 2
	statTX0IF   = 1 << 3
)

// RX STATUS fields (figure 12-9).
const (
	rxstatMsgRXB0 = 0x40 // bits 7:6: message in RXB0 / RXB1
	rxstatMsgRXB1 = 0x80
	rxstatRemote  = 0x08 // bits 4:3: type; bit 3 remote, bit 4 extended
	rxstatExt     = 0x10
)

// Acceptance filters RXF0..RXF5 (registers 4-10..4-13): SIDH, SIDL, EID8, EID0.
const (
	regRXF0SIDH = 0x00 // RXF0..RXF2 at 0x00, 0x04, 0x08
	regRXF3SIDH = 0x10 // RXF3..RXF5 at 0x10, 0x14, 0x18
)

// rxfSIDH is the SIDH address of acceptance filter n (0..5).
func rxfSIDH(n int) uint8 {
	if n < 3 {
		return regRXF0SIDH + 4*uint8(n)
	}
	return regRXF3SIDH + 4*uint8(n-3)
}

// BFPCTRL (register 4-3) and TXRTSCTRL (register 3-2): the RXnBF and TXnRTS pins.
const (
	regBFPCTRL    = 0x0C
	regTXRTSCTRL  = 0x0D
	txrtsBnRTSM   = 0x07 // B2RTSM..B0RTSM: pin n requests TXBn's transmission (else input)
	txrtsPinsHigh = 0x38 // B2RTS..B0RTS of unconnected pins: internal pull-ups, high
)

// CANSTAT (register 10-2).
const (
	regCANSTAT   = 0x0E
	canstatOPMOD = 0xE0 // OPMOD[2:0]: the mode the chip is in
	icodNone     = 0 << 1
	icodERR      = 1 << 1
	icodWAK      = 2 << 1
	icodTXB0     = 3 << 1
	icodTXB1     = 4 << 1
	icodTXB2     = 5 << 1
	icodRXB0     = 6 << 1
	icodRXB1     = 7 << 1
)

// CANCTRL (register 10-1).
const (
	regCANCTRL   = 0x0F
	canctrlREQOP = 0xE0 // REQOP[2:0]: the mode requested
	canctrlABAT  = 0x10
	canctrlOSM   = 0x08
	canctrlAtPOR = 0x87 // REQOP = Configuration, CLKEN, CLKPRE = 11
	modeNormal   = 0x00 // REQOP/OPMOD values, bits 7:5 in place
	modeSleep    = 0x20
	modeLoopback = 0x40
	modeListen   = 0x60
	modeConfig   = 0x80
	regTEC       = 0x1C // register 6-1
	regREC       = 0x1D // register 6-2
	regRXM0SIDH  = 0x20 // masks RXM0, RXM1 (registers 4-14..4-17)
	regRXM1SIDH  = 0x24
)

// CNF3..CNF1 (registers 5-3, 5-2, 5-1).
const (
	regCNF3     = 0x28
	cnf3PHSEG2  = 0x07 // PS2 = PHSEG2+1 TQ
	regCNF2     = 0x29
	cnf2BTLMODE = 0x80 // PS2 from CNF3 (else max(PS1, IPT))
	cnf2PHSEG1  = 0x38 // PS1 = PHSEG1+1 TQ
	cnf2PHSEG1S = 3
	cnf2PRSEG   = 0x07 // PropSeg = PRSEG+1 TQ
	regCNF1     = 0x2A
	cnf1BRP     = 0x3F // TQ = 2·(BRP+1)/Fosc
)

// CANINTE and CANINTF (registers 7-1, 7-2) share one layout.
const (
	regCANINTE = 0x2B
	regCANINTF = 0x2C
	intMERR    = 0x80
	intWAK     = 0x40
	intERR     = 0x20
	intTX0     = 0x04 // TX1 0x08, TX2 0x10
	intTX1     = 0x08
	intTX2     = 0x10
	intRX0     = 0x01 // RX1 0x02
	intRX1     = 0x02
)

// EFLG (register 6-3).
const (
	regEFLG    = 0x2D
	eflgRX1OVR = 0x80
	eflgRX0OVR = 0x40
	eflgTXBO   = 0x20
	eflgTXEP   = 0x10
	eflgRXEP   = 0x08
	eflgTXWAR  = 0x04
	eflgRXWAR  = 0x02
	eflgEWARN  = 0x01
	eflgOVR    = eflgRX0OVR | eflgRX1OVR // the bits the MCU clears; the rest follow TEC/REC
)

// TXBnCTRL (register 3-1) at 0x30, 0x40, 0x50, then SIDH, SIDL, EID8, EID0, DLC, D0..D7.
const (
	regTXB0CTRL = 0x30
	txbABTF     = 0x40
	txbMLOA     = 0x20
	txbTXERR    = 0x10
	txbTXREQ    = 0x08
	txbTXP      = 0x03
)

// RXBnCTRL (registers 4-1, 4-2) at 0x60, 0x70, then the received frame as in a TX buffer.
const (
	regRXB0CTRL = 0x60
	regRXB1CTRL = 0x70
	rxbRXM      = 0x60 // RXM[1:0]: 11 = any message, 00 = filtered
	rxbRXMAny   = 0x60
	rxbRXRTR    = 0x08
	rxb0BUKT    = 0x04 // rollover to RXB1
	rxb0BUKT1   = 0x02 // read-only copy of BUKT
	rxb0FILHIT0 = 0x01
	rxb1FILHIT  = 0x07
)

// Offsets in a TX or RX buffer block (registers 3-3..3-8, 4-4..4-9).
const (
	bufCTRL = 0
	bufSIDH = 1
	bufSIDL = 2
	bufDLC  = 5
	bufD0   = 6
	bufLen  = 14 // CTRL..D7
)

// SIDL (TX/RX buffers, filters, masks) and DLC fields.
const (
	sidlSRR = 0x10 // RX: standard remote frame
	sidlIDE = 0x08 // EXIDE (TX, filters) / IDE (RX): extended identifier
	sidlEID = 0x03 // EID[17:16]
	dlcRTR  = 0x40
	dlcDLC  = 0x0F
)

// bitModifiable reports whether BIT MODIFY applies its mask at a (the shaded
// registers of table 11-1); elsewhere the chip forces the mask to 0xFF (§12.10).
func bitModifiable(a uint8) bool {
	switch a & 0x7F {
	case regBFPCTRL, regTXRTSCTRL, regCNF3, regCNF2, regCNF1, regCANINTE, regCANINTF, regEFLG,
		regTXB0CTRL, regTXB0CTRL + 0x10, regTXB0CTRL + 0x20, regRXB0CTRL, regRXB1CTRL:
		return true
	}
	return a&0x0F == 0x0F // CANCTRL and its mirrors
}
