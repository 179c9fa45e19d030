package bridge

import (
	"cand/canstate"
	"cand/mcp2515"
	"cand/socketcan"
)

// Error implements mcp2515.Sink: the chip's error event is counted, a bus-off or a
// chip reset starts recovery (recovery.go), and, with error frames on, the event
// goes to the socket as a SocketCAN error frame.
func (p *Port) Error(e *mcp2515.ErrorEvent) {
	if e.ChipReset {
		p.needReinit = true
		return
	}
	p.M.BusState.Set(int64(e.State))
	p.M.TEC.Set(int64(e.TEC))
	p.M.REC.Set(int64(e.REC))
	if e.RX0Overflow {
		p.M.RXOverflows.Inc()
	}
	if e.RX1Overflow {
		p.M.RXOverflows.Inc()
	}
	if e.MessageError {
		p.M.MessageErrors.Inc()
	}
	if e.State == canstate.BusOff && e.Prev != canstate.BusOff {
		p.enterBusOff()
	}
	if !p.errorFrames {
		return
	}
	ef := errorFrameFor(e)
	if ef.Class == 0 {
		return
	}
	p.sendError(&ef)
}

// errorFrameFor maps what the chip reported to a SocketCAN error frame in the
// kernel's format (linux/can/error.h), as the kernel's mcp251x does, plus the
// error counters (CAN_ERR_CNT, data[6] = TEC, data[7] = REC) that mcp251x omits.
// A message error (MERRF) alone makes no frame: the chip does not say which protocol
// error it was, and it fires on every failed attempt (the kernel warns that bus-error
// frames "may flood"); it is counted in cand_message_errors_total.
func errorFrameFor(e *mcp2515.ErrorEvent) socketcan.ErrorFrame {
	var ef socketcan.ErrorFrame
	switch {
	case e.State == canstate.BusOff && e.Prev != canstate.BusOff:
		ef.Class |= socketcan.CAN_ERR_BUSOFF
	case e.State != e.Prev && e.State > e.Prev:
		ef.Class |= socketcan.CAN_ERR_CRTL
		switch {
		case e.TXPassive:
			ef.Data[1] |= socketcan.CAN_ERR_CRTL_TX_PASSIVE
		case e.RXPassive:
			ef.Data[1] |= socketcan.CAN_ERR_CRTL_RX_PASSIVE
		case e.TXWarning:
			ef.Data[1] |= socketcan.CAN_ERR_CRTL_TX_WARNING
		case e.RXWarning:
			ef.Data[1] |= socketcan.CAN_ERR_CRTL_RX_WARNING
		}
	case e.State != e.Prev && e.State == canstate.ErrorActive:
		ef.Class |= socketcan.CAN_ERR_CRTL
		ef.Data[1] |= socketcan.CAN_ERR_CRTL_ACTIVE
	}
	if e.RX0Overflow || e.RX1Overflow {
		ef.Class |= socketcan.CAN_ERR_CRTL
		ef.Data[1] |= socketcan.CAN_ERR_CRTL_RX_OVERFLOW
	}
	if ef.Class != 0 {
		ef.Class |= socketcan.CAN_ERR_CNT
		ef.Data[6], ef.Data[7] = e.TEC, e.REC
	}
	return ef
}
