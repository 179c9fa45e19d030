// Package mcp2515 drives a Microchip MCP2515 stand-alone CAN controller over SPI.
//
// This file is the chip's register map and instruction set as the driver uses them,
// declared once. Names follow the MCP2515 datasheet (DS20001801J); each register's
// fields stand right under it. The simulator's chip model (sim/mcpchip) declares its
// own from the datasheet, so that a wrong value here shows as a failing test.
package mcp2515

// SPI instructions (datasheet table 12-1).
const (
	InstrReset       = 0xC0 // RESET: registers to defaults, Configuration mode
	InstrRead        = 0x03 // READ addr, data...: auto-incrementing read
	InstrReadRxBuf   = 0x90 // READ RX BUFFER 1001 0nm0: | RxBufRXB0SIDH etc.
	InstrWrite       = 0x02 // WRITE addr, data...: auto-incrementing write
	InstrLoadTxBuf   = 0x40 // LOAD TX BUFFER 0100 0abc: | LoadTXB0SIDH etc.
	InstrRTS         = 0x80 // RTS 1000 0nnn: | bit per TX buffer
	InstrReadStatus  = 0xA0 // READ STATUS: one status byte, repeated while clocked
	InstrRxStatus    = 0xB0 // RX STATUS: one status byte, repeated while clocked
	InstrBitModify   = 0x05 // BIT MODIFY addr, mask, data
	RxBufRXB0SIDH    = 0x00 // READ RX BUFFER operand: RXB0 from SIDH (0x61)
	RxBufRXB0D0      = 0x02 // READ RX BUFFER operand: RXB0 from D0 (0x66)
	RxBufRXB1SIDH    = 0x04 // READ RX BUFFER operand: RXB1 from SIDH (0x71)
	RxBufRXB1D0      = 0x06 // READ RX BUFFER operand: RXB1 from D0 (0x76)
	LoadTXB0SIDH     = 0x00 // LOAD TX BUFFER operand: TXB0 from SIDH (0x31)
	LoadTXB0D0       = 0x01 // LOAD TX BUFFER operand: TXB0 from D0 (0x36)
	LoadTXB1SIDH     = 0x02
	LoadTXB1D0       = 0x03
	LoadTXB2SIDH     = 0x04
	LoadTXB2D0       = 0x05
	RTSTXB0          = 0x01
	RTSTXB1          = 0x02
	RTSTXB2          = 0x04
	InstrMaxSCLK     = 10_000_000 // maximum SPI clock, Hz (datasheet features list)
	OSTCycles        = 128        // oscillator start-up timer: OSC1 cycles after reset (§8.1)
	RegisterFileSize = 0x80       // addresses 0x00..0x7F
)

// READ STATUS result bits (datasheet figure 12-8).
const (
	StatusRX0IF   = 1 << 0 // CANINTF.RX0IF
	StatusRX1IF   = 1 << 1 // CANINTF.RX1IF
	StatusTXB0REQ = 1 << 2 // TXB0CTRL.TXREQ
	StatusTX0IF   = 1 << 3 // CANINTF.TX0IF
	StatusTXB1REQ = 1 << 4 // TXB1CTRL.TXREQ
	StatusTX1IF   = 1 << 5 // CANINTF.TX1IF
	StatusTXB2REQ = 1 << 6 // TXB2CTRL.TXREQ
	StatusTX2IF   = 1 << 7 // CANINTF.TX2IF
)

// RX STATUS result fields (datasheet figure 12-9).
const (
	RxStatusMsgMask    = 0xC0 // bits 7:6: 00 none, 01 RXB0, 10 RXB1, 11 both
	RxStatusMsgRXB0    = 0x40
	RxStatusMsgRXB1    = 0x80
	RxStatusTypeMask   = 0x18 // bits 4:3: 00 std data, 01 std remote, 10 ext data, 11 ext remote
	RxStatusTypeRemote = 0x08
	RxStatusTypeExt    = 0x10
	RxStatusFilterMask = 0x07 // bits 2:0: RXF0..5; 6 = RXF0 rollover, 7 = RXF1 rollover
)

// Acceptance filters RXF0..RXF5: four registers each (SIDH, SIDL, EID8, EID0).
const (
	RegRXF0SIDH = 0x00
	RegRXF1SIDH = 0x04
	RegRXF2SIDH = 0x08
	RegRXF3SIDH = 0x10
	RegRXF4SIDH = 0x14
	RegRXF5SIDH = 0x18
)

// RegRXFSIDH returns the SIDH address of acceptance filter n (0..5).
func RegRXFSIDH(n int) uint8 {
	if n < 3 {
		return uint8(RegRXF0SIDH + 4*n)
	}
	return uint8(RegRXF3SIDH + 4*(n-3))
}

// BFPCTRL: RXnBF pin control and status.
const (
	RegBFPCTRL   = 0x0C
	BFPCTRLB1BFS = 1 << 5
	BFPCTRLB0BFS = 1 << 4
	BFPCTRLB1BFE = 1 << 3
	BFPCTRLB0BFE = 1 << 2
	BFPCTRLB1BFM = 1 << 1
	BFPCTRLB0BFM = 1 << 0
)

// TXRTSCTRL: TXnRTS pin control and status.
const (
	RegTXRTSCTRL = 0x0D
)

// CANSTAT: operating mode and interrupt code. Mirrored at every xEh address.
const (
	RegCANSTAT   = 0x0E
	CANSTATOPMOD = 0xE0 // OPMOD[2:0], bits 7:5: the actual mode
	CANSTATICOD  = 0x0E // ICOD[2:0], bits 3:1
	ICODNone     = 0 << 1
	ICODError    = 1 << 1
	ICODWake     = 2 << 1
	ICODTXB0     = 3 << 1
	ICODTXB1     = 4 << 1
	ICODTXB2     = 5 << 1
	ICODRXB0     = 6 << 1
	ICODRXB1     = 7 << 1
)

// CANCTRL: mode request and CLKOUT. Mirrored at every xFh address.
const (
	RegCANCTRL     = 0x0F
	CANCTRLREQOP   = 0xE0 // REQOP[2:0], bits 7:5
	CANCTRLABAT    = 0x10 // abort all pending transmissions
	CANCTRLOSM     = 0x08 // one-shot mode
	CANCTRLCLKEN   = 0x04 // CLKOUT pin enable
	CANCTRLCLKPRE  = 0x03 // CLKOUT prescaler
	CANCTRLDefault = 0x87 // value after reset: Configuration mode, CLKEN, CLKPRE=/8
)

// Operating modes as REQOP/OPMOD values (bits 7:5 in place).
const (
	ModeNormal     = 0x00
	ModeSleep      = 0x20
	ModeLoopback   = 0x40
	ModeListenOnly = 0x60
	ModeConfig     = 0x80
)

// Error counters.
const (
	RegTEC = 0x1C // transmit error counter
	RegREC = 0x1D // receive error counter
)

// Acceptance masks RXM0 (RXB0) and RXM1 (RXB1): SIDH, SIDL, EID8, EID0.
const (
	RegRXM0SIDH = 0x20
	RegRXM1SIDH = 0x24
)

// CNF3: PS2 length, SOF and wake-up filter.
const (
	RegCNF3    = 0x28
	CNF3SOF    = 0x80 // CLKOUT pin is SOF signal (datasheet bit 7; the kernel header's 0x08 is wrong)
	CNF3WAKFIL = 0x40 // wake-up filter enabled
	CNF3PHSEG2 = 0x07 // PHSEG2[2:0]: PS2 length = (PHSEG2+1) TQ
)

// CNF2: PropSeg, PS1, sampling.
const (
	RegCNF2      = 0x29
	CNF2BTLMODE  = 0x80 // PS2 length from CNF3.PHSEG2
	CNF2SAM      = 0x40 // bus sampled three times
	CNF2PHSEG1   = 0x38 // PHSEG1[2:0], bits 5:3: PS1 = (PHSEG1+1) TQ
	CNF2PRSEG    = 0x07 // PRSEG[2:0]: PropSeg = (PRSEG+1) TQ
	CNF2PHSEG1Sh = 3
)

// CNF1: SJW and baud rate prescaler.
const (
	RegCNF1   = 0x2A
	CNF1SJW   = 0xC0 // SJW[1:0], bits 7:6: SJW = (SJW+1) TQ
	CNF1SJWSh = 6
	CNF1BRP   = 0x3F // BRP[5:0]: TQ = 2·(BRP+1)/Fosc
)

// CANINTE / CANINTF: interrupt enables and flags share one bit layout.
const (
	RegCANINTE = 0x2B
	RegCANINTF = 0x2C
	IntMERR    = 0x80 // message error
	IntWAK     = 0x40 // wake-up
	IntERR     = 0x20 // error (EFLG change)
	IntTX2     = 0x10 // TXB2 empty
	IntTX1     = 0x08 // TXB1 empty
	IntTX0     = 0x04 // TXB0 empty
	IntRX1     = 0x02 // RXB1 full
	IntRX0     = 0x01 // RXB0 full
	IntTXAll   = IntTX0 | IntTX1 | IntTX2
	IntRXAll   = IntRX0 | IntRX1
)

// EFLG: error flags.
const (
	RegEFLG     = 0x2D
	EFLGRX1OVR  = 0x80 // RXB1 overflow
	EFLGRX0OVR  = 0x40 // RXB0 overflow
	EFLGTXBO    = 0x20 // bus-off: TEC reached 255
	EFLGTXEP    = 0x10 // transmit error-passive: TEC ≥ 128
	EFLGRXEP    = 0x08 // receive error-passive: REC ≥ 128
	EFLGTXWAR   = 0x04 // transmit warning: TEC ≥ 96
	EFLGRXWAR   = 0x02 // receive warning: REC ≥ 96
	EFLGEWARN   = 0x01 // TXWAR or RXWAR
	EFLGOVRMask = EFLGRX0OVR | EFLGRX1OVR
)

// Transmit buffers TXB0..2 at 0x30, 0x40, 0x50: CTRL, SIDH, SIDL, EID8, EID0, DLC, D0..D7.
const (
	RegTXB0CTRL  = 0x30
	RegTXB1CTRL  = 0x40
	RegTXB2CTRL  = 0x50
	TXBCTRLABTF  = 0x40 // message aborted
	TXBCTRLMLOA  = 0x20 // message lost arbitration
	TXBCTRLTXERR = 0x10 // transmission error detected
	TXBCTRLTXREQ = 0x08 // message transmit request
	TXBCTRLTXP   = 0x03 // TXP[1:0]: priority, 3 highest
)

// Receive buffers RXB0, RXB1 at 0x60, 0x70: CTRL, SIDH, SIDL, EID8, EID0, DLC, D0..D7.
const (
	RegRXB0CTRL     = 0x60
	RegRXB1CTRL     = 0x70
	RXBCTRLRXM      = 0x60 // RXM[1:0], bits 6:5: 11 = any message (filters off), 00 = filtered
	RXBCTRLRXMAny   = 0x60
	RXBCTRLRXRTR    = 0x08 // received remote transfer request
	RXB0CTRLBUKT    = 0x04 // rollover: RXB0 overflow goes to RXB1
	RXB0CTRLBUKT1   = 0x02 // read-only copy of BUKT
	RXB0CTRLFILHIT0 = 0x01
	RXB1CTRLFILHIT  = 0x07 // FILHIT[2:0]: filter 0..5 that accepted the message
)

// Offsets inside a TX or RX buffer block (TXBn/RXBn base = CTRL).
const (
	BufCTRL = 0
	BufSIDH = 1
	BufSIDL = 2
	BufEID8 = 3
	BufEID0 = 4
	BufDLC  = 5
	BufD0   = 6
	BufLen  = 14 // CTRL..D7
)

// SIDL (also TXBnSIDL, RXFnSIDL, RXMnSIDL) and DLC fields.
const (
	SIDLSIDMask = 0xE0 // SID[2:0], bits 7:5
	SIDLSRR     = 0x10 // RX: standard frame remote request
	SIDLEXIDE   = 0x08 // extended identifier (IDE on RX)
	SIDLEIDMask = 0x03 // EID[17:16]
	DLCRTR      = 0x40 // remote transmission request (TX, and extended RX)
	DLCMask     = 0x0F
	// Bits of an RX buffer that the chip does not implement and reads as 0
	// (datasheet register 4-5, RXBnSIDL bit 2; register 4-8, RXBnDLC bit 7).
	// RXBnDLC bits 5:4 (RB1, RB0) are reserved and read what the bus sent (R-x).
	RXBSIDLUnimplemented = 0x04
	RXBDLCUnimplemented  = 0x80
)

// IsBitModifiable reports whether BIT MODIFY applies its mask at addr; on any other
// register the chip forces the mask to 0xFF (datasheet §12.10, figure 11-1 shading).
func IsBitModifiable(addr uint8) bool {
	switch addr & 0x7F {
	case RegBFPCTRL, RegTXRTSCTRL, RegCNF3, RegCNF2, RegCNF1, RegCANINTE, RegCANINTF, RegEFLG,
		RegTXB0CTRL, RegTXB1CTRL, RegTXB2CTRL, RegRXB0CTRL, RegRXB1CTRL:
		return true
	}
	return addr&0x0F == 0x0F // CANCTRL and its mirrors
}
