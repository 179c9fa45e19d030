package slcan

import (
	"cand/socketcan"
)

// AppendRecord appends the lines for one 16-byte struct can_frame as the
// bridge writes it: a data or remote frame as its frame line, an error frame
// as its `s` state line and its `e` error line (either may be absent, see
// AppendErrorFrame). ok is false for a record that is neither (a length above
// 8 or a standard ID above 0x7ff): nothing is appended.
func AppendRecord(dst []byte, rec *[socketcan.FrameSize]byte) (out []byte, ok bool) {
	f, kind := socketcan.Decode(rec)
	switch kind {
	case socketcan.FrameData, socketcan.FrameRemote:
		return AppendFrame(dst, f), true
	case socketcan.FrameError:
		ef, _ := socketcan.DecodeErrorFrame(rec)
		return AppendErrorFrame(dst, &ef), true
	}
	return dst, false
}

// ErrorState is the bus state an error frame reports, if it reports one
// (linux/can/error.h): CAN_ERR_BUSOFF is bus-off; CAN_ERR_RESTARTED and
// CAN_ERR_CRTL_ACTIVE are error-active; CAN_ERR_CRTL_*_PASSIVE and
// *_WARNING the passive and warning states; otherwise a frame with the
// counters (CAN_ERR_CNT) states what the counters say (ISO 11898-1: either
// counter at 128 or above is passive, at 96 or above warning).
func ErrorState(ef *socketcan.ErrorFrame) (State, bool) {
	crtl := ef.Data[1]
	switch {
	case ef.Class&socketcan.CAN_ERR_BUSOFF != 0:
		return StateBusOff, true
	case ef.Class&socketcan.CAN_ERR_CRTL != 0 && crtl&(socketcan.CAN_ERR_CRTL_TX_PASSIVE|socketcan.CAN_ERR_CRTL_RX_PASSIVE) != 0:
		return StatePassive, true
	case ef.Class&socketcan.CAN_ERR_CRTL != 0 && crtl&(socketcan.CAN_ERR_CRTL_TX_WARNING|socketcan.CAN_ERR_CRTL_RX_WARNING) != 0:
		return StateWarning, true
	case ef.Class&socketcan.CAN_ERR_RESTARTED != 0,
		ef.Class&socketcan.CAN_ERR_CRTL != 0 && crtl&socketcan.CAN_ERR_CRTL_ACTIVE != 0:
		return StateActive, true
	case ef.Class&socketcan.CAN_ERR_CNT != 0:
		worst := max(ef.TEC(), ef.REC())
		switch {
		case worst >= socketcan.CAN_ERROR_PASSIVE_THRESHOLD:
			return StatePassive, true
		case worst >= socketcan.CAN_ERROR_WARNING_THRESHOLD:
			return StateWarning, true
		}
		return StateActive, true
	}
	return 0, false
}

// ErrorLetters appends the `e` letters an error frame's classes name:
// CAN_ERR_ACK a; CAN_ERR_PROT's BIT0 b, BIT1 B, FORM f, STUFF s, and a bit
// error in the CRC sequence c (how slc_bump_err builds 'c'); CAN_ERR_CRTL's
// RX_OVERFLOW o and TX_OVERFLOW O.
func ErrorLetters(dst []byte, ef *socketcan.ErrorFrame) []byte {
	if ef.Class&socketcan.CAN_ERR_ACK != 0 {
		dst = append(dst, ErrAck)
	}
	if ef.Class&socketcan.CAN_ERR_PROT != 0 {
		typ, loc := ef.Data[2], ef.Data[3]
		for _, m := range [...]struct {
			bit    uint8
			letter byte
		}{
			{socketcan.CAN_ERR_PROT_BIT0, ErrBit0},
			{socketcan.CAN_ERR_PROT_BIT1, ErrBit1},
			{socketcan.CAN_ERR_PROT_FORM, ErrForm},
			{socketcan.CAN_ERR_PROT_STUFF, ErrStuff},
		} {
			if typ&m.bit != 0 {
				dst = append(dst, m.letter)
			}
		}
		if typ&socketcan.CAN_ERR_PROT_BIT != 0 && loc == socketcan.CAN_ERR_PROT_LOC_CRC_SEQ {
			dst = append(dst, ErrCRC)
		}
	}
	if ef.Class&socketcan.CAN_ERR_CRTL != 0 {
		if ef.Data[1]&socketcan.CAN_ERR_CRTL_RX_OVERFLOW != 0 {
			dst = append(dst, ErrRXOverrun)
		}
		if ef.Data[1]&socketcan.CAN_ERR_CRTL_TX_OVERFLOW != 0 {
			dst = append(dst, ErrTXOverrun)
		}
	}
	return dst
}

// AppendErrorFrame appends an error frame's lines: the state line when the
// frame reports a state (ErrorState), with its counters (0 without
// CAN_ERR_CNT), then the `e` line when it names errors (ErrorLetters). The
// kernel acts on a state line only when the state differs from the one it
// holds (slc_bump_state), so repeating a state is harmless.
func AppendErrorFrame(dst []byte, ef *socketcan.ErrorFrame) []byte {
	if s, ok := ErrorState(ef); ok {
		var tec, rec int
		if ef.Class&socketcan.CAN_ERR_CNT != 0 {
			tec, rec = int(ef.TEC()), int(ef.REC())
		}
		dst = AppendState(dst, s, rec, tec)
	}
	var letters [maxErrLetters]byte
	return AppendErrors(dst, ErrorLetters(letters[:0], ef)...)
}
