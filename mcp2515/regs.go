// Package mcp2515 drives a Microchip MCP2515 stand-alone CAN controller over SPI.
//
// This file is the chip's register map and instruction set as the driver uses them,
// declared once. Names follow the MCP2515 datasheet (DS20001801J); each register's
// fields stand right under it. The simulator's chip model (sim/mcpchip) declares its
// own from the datasheet, so that a wrong value here shows as a failing test.
package mcp2515

// Addr is a register's address (datasheet table 11-1): what READ, WRITE and BIT
// MODIFY take after the instruction.
type Addr uint8

// Bits is a register's value seen as its fields, or a mask of some of them.
type Bits uint8

// Mode is an operating mode as CANCTRL.REQOP requests it and CANSTAT.OPMOD
// reports it (bits 7:5 in place, datasheet §10).
type Mode uint8

// Status is the byte READ STATUS returns: a flag per RX and TX buffer.
type Status uint8

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

// ReadRxBuf is the READ RX BUFFER instruction for RX buffer n (0, 1), from SIDH.
func ReadRxBuf(n int) byte { return InstrReadRxBuf | byte(n)*RxBufRXB1SIDH }

// LoadTxBuf is the LOAD TX BUFFER instruction for TX buffer n (0..2), from SIDH.
func LoadTxBuf(n int) byte { return InstrLoadTxBuf | byte(n)*LoadTXB1SIDH }

// RTS is the RTS instruction requesting transmission of TX buffer n (0..2).
func RTS(n int) byte { return InstrRTS | RTSTXB0<<n }

// READ STATUS result bits (datasheet figure 12-8).
const (
	StatusRX0IF   Status = 1 << 0 // CANINTF.RX0IF
	StatusRX1IF   Status = 1 << 1 // CANINTF.RX1IF
	StatusTXB0REQ Status = 1 << 2 // TXB0CTRL.TXREQ
	StatusTX0IF   Status = 1 << 3 // CANINTF.TX0IF
	StatusTXB1REQ Status = 1 << 4 // TXB1CTRL.TXREQ
	StatusTX1IF   Status = 1 << 5 // CANINTF.TX1IF
	StatusTXB2REQ Status = 1 << 6 // TXB2CTRL.TXREQ
	StatusTX2IF   Status = 1 << 7 // CANINTF.TX2IF
	StatusRXAll          = StatusRX0IF | StatusRX1IF
	StatusTXAll          = StatusTX0IF | StatusTX1IF | StatusTX2IF
)

// StatusRXnIF is RX buffer n's (0, 1) full flag in READ STATUS.
func StatusRXnIF(n int) Status { return StatusRX0IF << n }

// StatusTXBnREQ is TX buffer n's (0..2) TXREQ in READ STATUS.
func StatusTXBnREQ(n int) Status { return StatusTXB0REQ << (2 * n) }

// StatusTXnIF is TX buffer n's (0..2) TXnIF in READ STATUS.
func StatusTXnIF(n int) Status { return StatusTX0IF << (2 * n) }

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
	RegRXF0SIDH Addr = 0x00
	RegRXF1SIDH      = 0x04
	RegRXF2SIDH      = 0x08
	RegRXF3SIDH      = 0x10
	RegRXF4SIDH      = 0x14
	RegRXF5SIDH      = 0x18
)

// RXFnSIDH returns the SIDH address of acceptance filter n (0..5).
func RXFnSIDH(n int) Addr {
	if n < 3 {
		return RegRXF0SIDH + Addr(4*n)
	}
	return RegRXF3SIDH + Addr(4*(n-3))
}

// BFPCTRL: RXnBF pin control and status.
const (
	RegBFPCTRL   Addr = 0x0C
	BFPCTRLB1BFS Bits = 1 << 5
	BFPCTRLB0BFS Bits = 1 << 4
	BFPCTRLB1BFE Bits = 1 << 3
	BFPCTRLB0BFE Bits = 1 << 2
	BFPCTRLB1BFM Bits = 1 << 1
	BFPCTRLB0BFM Bits = 1 << 0
)

// TXRTSCTRL: TXnRTS pin control and status.
const (
	RegTXRTSCTRL Addr = 0x0D
)

// CANSTAT: operating mode and interrupt code. Mirrored at every xEh address.
const (
	RegCANSTAT   Addr = 0x0E
	CANSTATOPMOD Bits = 0xE0 // OPMOD[2:0], bits 7:5: the actual mode
	CANSTATICOD  Bits = 0x0E // ICOD[2:0], bits 3:1
	ICODNone     Bits = 0 << 1
	ICODError    Bits = 1 << 1
	ICODWake     Bits = 2 << 1
	ICODTXB0     Bits = 3 << 1
	ICODTXB1     Bits = 4 << 1
	ICODTXB2     Bits = 5 << 1
	ICODRXB0     Bits = 6 << 1
	ICODRXB1     Bits = 7 << 1
)

// CANCTRL: mode request and CLKOUT. Mirrored at every xFh address.
const (
	RegCANCTRL     Addr = 0x0F
	CANCTRLREQOP   Bits = 0xE0 // REQOP[2:0], bits 7:5
	CANCTRLABAT    Bits = 0x10 // abort all pending transmissions
	CANCTRLOSM     Bits = 0x08 // one-shot mode
	CANCTRLCLKEN   Bits = 0x04 // CLKOUT pin enable
	CANCTRLCLKPRE  Bits = 0x03 // CLKOUT prescaler
	CANCTRLDefault Bits = 0x87 // value after reset: Configuration mode, CLKEN, CLKPRE=/8
)

// CANCTRLAfterReset reports whether a CANCTRL value has the reset pattern the
// kernel's drivers/net/can/spi/mcp251x.c probes for: ABAT clear, CLKEN set,
// CLKPRE = /8 (CANCTRL & 0x17 == 0x07).
func CANCTRLAfterReset(ctrl Bits) bool {
	return ctrl&(CANCTRLABAT|CANCTRLCLKEN|CANCTRLCLKPRE) == CANCTRLCLKEN|CANCTRLCLKPRE
}

// Operating modes as REQOP/OPMOD values (bits 7:5 in place).
const (
	ModeNormal     Mode = 0x00
	ModeSleep           = 0x20
	ModeLoopback        = 0x40
	ModeListenOnly      = 0x60
	ModeConfig          = 0x80
)

// OPMOD is the operating mode a CANSTAT value reports.
func OPMOD(canstat Bits) Mode { return Mode(canstat & CANSTATOPMOD) }

// REQOP is CANCTRL's REQOP field requesting mode m (a Mode is bits 7:5 in place).
func REQOP(m Mode) Bits { return Bits(m) }

// Error counters.
const (
	RegTEC Addr = 0x1C // transmit error counter
	RegREC Addr = 0x1D // receive error counter
)

// ErrorRegsLen is the number of registers from TEC to EFLG (0x1C..0x2D): the
// error counters, masks, CNF3..CNF1, CANINTE, CANINTF and EFLG, one READ.
const ErrorRegsLen = int(RegEFLG-RegTEC) + 1

// Acceptance masks RXM0 (RXB0) and RXM1 (RXB1): SIDH, SIDL, EID8, EID0.
const (
	RegRXM0SIDH Addr = 0x20
	RegRXM1SIDH Addr = 0x24
)

// RXMnSIDH returns the SIDH address of acceptance mask n (0, 1).
func RXMnSIDH(n int) Addr { return RegRXM0SIDH + Addr(4*n) }

// CNF3: PS2 length, SOF and wake-up filter.
const (
	RegCNF3    Addr = 0x28
	CNF3SOF    Bits = 0x80 // CLKOUT pin is SOF signal (datasheet bit 7; the kernel header's 0x08 is wrong)
	CNF3WAKFIL Bits = 0x40 // wake-up filter enabled
	CNF3PHSEG2 Bits = 0x07 // PHSEG2[2:0]: PS2 length = (PHSEG2+1) TQ
)

// CNF2: PropSeg, PS1, sampling.
const (
	RegCNF2      Addr = 0x29
	CNF2BTLMODE  Bits = 0x80 // PS2 length from CNF3.PHSEG2
	CNF2SAM      Bits = 0x40 // bus sampled three times
	CNF2PHSEG1   Bits = 0x38 // PHSEG1[2:0], bits 5:3: PS1 = (PHSEG1+1) TQ
	CNF2PRSEG    Bits = 0x07 // PRSEG[2:0]: PropSeg = (PRSEG+1) TQ
	CNF2PHSEG1Sh      = 3
)

// CNF1: SJW and baud rate prescaler.
const (
	RegCNF1   Addr = 0x2A
	CNF1SJW   Bits = 0xC0 // SJW[1:0], bits 7:6: SJW = (SJW+1) TQ
	CNF1SJWSh      = 6
	CNF1BRP   Bits = 0x3F // BRP[5:0]: TQ = 2·(BRP+1)/Fosc
)

// CNF holds the bit-timing fields of CNF1..CNF3 as the registers hold them: each
// length field is the length in TQ less 1.
type CNF struct {
	BRP, SJW, PRSEG, PHSEG1, PHSEG2 uint8
	SAM, BTLMODE                    bool
}

// DecodeCNF reads the bit-timing fields out of CNF1..CNF3.
func DecodeCNF(cnf1, cnf2, cnf3 byte) CNF {
	c1, c2, c3 := Bits(cnf1), Bits(cnf2), Bits(cnf3)
	return CNF{
		BRP:     uint8(c1 & CNF1BRP),
		SJW:     uint8(c1&CNF1SJW) >> CNF1SJWSh,
		PRSEG:   uint8(c2 & CNF2PRSEG),
		PHSEG1:  uint8(c2&CNF2PHSEG1) >> CNF2PHSEG1Sh,
		PHSEG2:  uint8(c3 & CNF3PHSEG2),
		SAM:     c2&CNF2SAM != 0,
		BTLMODE: c2&CNF2BTLMODE != 0,
	}
}

// Encode packs the fields into CNF1..CNF3, SOF and WAKFIL clear; a field too
// wide for its register is cut to its bits.
func (c CNF) Encode() (cnf1, cnf2, cnf3 byte) {
	c1 := Bits(c.SJW<<CNF1SJWSh)&CNF1SJW | Bits(c.BRP)&CNF1BRP
	c2 := Bits(c.PHSEG1<<CNF2PHSEG1Sh)&CNF2PHSEG1 | Bits(c.PRSEG)&CNF2PRSEG
	if c.BTLMODE {
		c2 |= CNF2BTLMODE
	}
	if c.SAM {
		c2 |= CNF2SAM
	}
	return byte(c1), byte(c2), byte(Bits(c.PHSEG2) & CNF3PHSEG2)
}

// CANINTE / CANINTF: interrupt enables and flags share one bit layout.
const (
	RegCANINTE Addr = 0x2B
	RegCANINTF Addr = 0x2C
	IntMERR    Bits = 0x80 // message error
	IntWAK     Bits = 0x40 // wake-up
	IntERR     Bits = 0x20 // error (EFLG change)
	IntTX2     Bits = 0x10 // TXB2 empty
	IntTX1     Bits = 0x08 // TXB1 empty
	IntTX0     Bits = 0x04 // TXB0 empty
	IntRX1     Bits = 0x02 // RXB1 full
	IntRX0     Bits = 0x01 // RXB0 full
	IntTXAll        = IntTX0 | IntTX1 | IntTX2
	IntRXAll        = IntRX0 | IntRX1
)

// IntTXn is TX buffer n's (0..2) empty flag in CANINTE/CANINTF.
func IntTXn(n int) Bits { return IntTX0 << n }

// EFLG: error flags.
const (
	RegEFLG     Addr = 0x2D
	EFLGRX1OVR  Bits = 0x80 // RXB1 overflow
	EFLGRX0OVR  Bits = 0x40 // RXB0 overflow
	EFLGTXBO    Bits = 0x20 // bus-off: TEC reached 255
	EFLGTXEP    Bits = 0x10 // transmit error-passive: TEC ≥ 128
	EFLGRXEP    Bits = 0x08 // receive error-passive: REC ≥ 128
	EFLGTXWAR   Bits = 0x04 // transmit warning: TEC ≥ 96
	EFLGRXWAR   Bits = 0x02 // receive warning: REC ≥ 96
	EFLGEWARN   Bits = 0x01 // TXWAR or RXWAR
	EFLGOVRMask      = EFLGRX0OVR | EFLGRX1OVR
)

// Transmit buffers TXB0..2 at 0x30, 0x40, 0x50: CTRL, SIDH, SIDL, EID8, EID0, DLC, D0..D7.
const (
	RegTXB0CTRL  Addr = 0x30
	RegTXB1CTRL  Addr = 0x40
	RegTXB2CTRL  Addr = 0x50
	TXBCTRLABTF  Bits = 0x40 // message aborted
	TXBCTRLMLOA  Bits = 0x20 // message lost arbitration
	TXBCTRLTXERR Bits = 0x10 // transmission error detected
	TXBCTRLTXREQ Bits = 0x08 // message transmit request
	TXBCTRLTXP   Bits = 0x03 // TXP[1:0]: priority, 3 highest
)

// TXP is TXBnCTRL's TXP field for priority prio (0..3, 3 highest).
func TXP(prio byte) Bits { return Bits(prio) & TXBCTRLTXP }

// TXBnCTRL returns the CTRL address of TX buffer n (0..2); the buffer's other
// registers follow it (BufSIDH..).
func TXBnCTRL(n int) Addr { return RegTXB0CTRL + Addr(n)*(RegTXB1CTRL-RegTXB0CTRL) }

// Receive buffers RXB0, RXB1 at 0x60, 0x70: CTRL, SIDH, SIDL, EID8, EID0, DLC, D0..D7.
const (
	RegRXB0CTRL     Addr = 0x60
	RegRXB1CTRL     Addr = 0x70
	RXBCTRLRXM      Bits = 0x60 // RXM[1:0], bits 6:5: 11 = any message (filters off), 00 = filtered
	RXBCTRLRXMAny   Bits = 0x60
	RXBCTRLRXRTR    Bits = 0x08 // received remote transfer request
	RXB0CTRLBUKT    Bits = 0x04 // rollover: RXB0 overflow goes to RXB1
	RXB0CTRLBUKT1   Bits = 0x02 // read-only copy of BUKT
	RXB0CTRLFILHIT0 Bits = 0x01
	RXB1CTRLFILHIT  Bits = 0x07 // FILHIT[2:0]: filter 0..5 that accepted the message
)

// RXBnCTRL returns the CTRL address of RX buffer n (0, 1); the buffer's other
// registers follow it (BufSIDH..).
func RXBnCTRL(n int) Addr { return RegRXB0CTRL + Addr(n)*(RegRXB1CTRL-RegRXB0CTRL) }

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
	SIDLSIDMask Bits = 0xE0 // SID[2:0], bits 7:5
	SIDLSRR     Bits = 0x10 // RX: standard frame remote request
	SIDLEXIDE   Bits = 0x08 // extended identifier (IDE on RX)
	SIDLEIDMask Bits = 0x03 // EID[17:16]
	DLCRTR      Bits = 0x40 // remote transmission request (TX, and extended RX)
	DLCMask     Bits = 0x0F
	// Bits of an RX buffer that the chip does not implement and reads as 0
	// (datasheet register 4-5, RXBnSIDL bit 2; register 4-8, RXBnDLC bit 7).
	// RXBnDLC bits 5:4 (RB1, RB0) are reserved and read what the bus sent (R-x).
	RXBSIDLUnimplemented Bits = 0x04
	RXBDLCUnimplemented  Bits = 0x80
)

// From is a's place among consecutive registers read from base.
func (a Addr) From(base Addr) int { return int(a) - int(base) }

// IsBitModifiable reports whether BIT MODIFY applies its mask at addr; on any other
// register the chip forces the mask to 0xFF (datasheet §12.10, figure 11-1 shading).
func IsBitModifiable(addr Addr) bool {
	switch addr & 0x7F {
	case RegBFPCTRL, RegTXRTSCTRL, RegCNF3, RegCNF2, RegCNF1, RegCANINTE, RegCANINTF, RegEFLG,
		RegTXB0CTRL, RegTXB1CTRL, RegTXB2CTRL, RegRXB0CTRL, RegRXB1CTRL:
		return true
	}
	return addr&0x0F == 0x0F // CANCTRL and its mirrors
}
