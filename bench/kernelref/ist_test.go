package kernelref

import (
	"testing"

	"cand/mcp2515"
	"cand/socketcan"
)

// TestErrorState checks mcp251x_can_ist's state update: the first of TXBO, TXEP,
// RXEP, TXWAR, RXWAR set in EFLG gives the state and the error frame's class, the
// overflow bits add CAN_ERR_CRTL_RX_OVERFLOW and are counted, and an error frame
// goes up only with ERRIF.
func TestErrorState(t *testing.T) {
	crtl := func(bits uint8) socketcan.ErrorFrame {
		var e socketcan.ErrorFrame
		e.Controller(bits)
		return e
	}
	var busOff socketcan.ErrorFrame
	busOff.Add(socketcan.CAN_ERR_BUSOFF)
	overflowBusOff := busOff
	overflowBusOff.Controller(socketcan.CAN_ERR_CRTL_RX_OVERFLOW)
	for _, tc := range []struct {
		name      string
		intf      mcp2515.Bits
		eflag     mcp2515.Bits
		state     state
		frame     *socketcan.ErrorFrame // nil: none goes up
		overflows uint64
	}{
		{"active", mcp2515.IntERR, 0, stateActive, &socketcan.ErrorFrame{}, 0},
		{"bus off first", mcp2515.IntERR, mcp2515.EFLGTXBO | mcp2515.EFLGTXEP | mcp2515.EFLGRXWAR, stateBusOff, &busOff, 0},
		{"tx passive before rx passive", mcp2515.IntERR, mcp2515.EFLGTXEP | mcp2515.EFLGRXEP, statePassive, ptr(crtl(socketcan.CAN_ERR_CRTL_TX_PASSIVE)), 0},
		{"rx passive before tx warning", mcp2515.IntERR, mcp2515.EFLGRXEP | mcp2515.EFLGTXWAR, statePassive, ptr(crtl(socketcan.CAN_ERR_CRTL_RX_PASSIVE)), 0},
		{"tx warning before rx warning", mcp2515.IntERR, mcp2515.EFLGTXWAR | mcp2515.EFLGRXWAR, stateWarning, ptr(crtl(socketcan.CAN_ERR_CRTL_TX_WARNING)), 0},
		{"rx warning", mcp2515.IntERR, mcp2515.EFLGRXWAR, stateWarning, ptr(crtl(socketcan.CAN_ERR_CRTL_RX_WARNING)), 0},
		{"both overflows", mcp2515.IntERR, mcp2515.EFLGRX0OVR | mcp2515.EFLGRX1OVR, stateActive, ptr(crtl(socketcan.CAN_ERR_CRTL_RX_OVERFLOW)), 2},
		{"overflow at bus off", mcp2515.IntERR, mcp2515.EFLGTXBO | mcp2515.EFLGRX1OVR, stateBusOff, &overflowBusOff, 1},
		{"no ERRIF: state only", mcp2515.IntRX0, mcp2515.EFLGRXEP | mcp2515.EFLGRX0OVR, statePassive, nil, 0},
	} {
		var got *socketcan.ErrorFrame
		p := &port{st: &Stats{}, errFrame: func(e *socketcan.ErrorFrame) { got = ptr(*e) }}
		p.errorState(tc.intf, tc.eflag)
		if p.state != tc.state {
			t.Errorf("%s: state %d, want %d", tc.name, p.state, tc.state)
		}
		switch {
		case tc.frame == nil && got != nil:
			t.Errorf("%s: error frame %+v, want none", tc.name, *got)
		case tc.frame != nil && got == nil:
			t.Errorf("%s: no error frame, want %+v", tc.name, *tc.frame)
		case tc.frame != nil && *got != *tc.frame:
			t.Errorf("%s: error frame %+v, want %+v", tc.name, *got, *tc.frame)
		}
		wantFrames := uint64(0)
		if tc.frame != nil {
			wantFrames = 1
		}
		if n := p.st.ErrorFrames.Load(); n != wantFrames {
			t.Errorf("%s: ErrorFrames %d, want %d", tc.name, n, wantFrames)
		}
		if n := p.st.Overflows.Load(); n != tc.overflows {
			t.Errorf("%s: Overflows %d, want %d", tc.name, n, tc.overflows)
		}
	}
}

func ptr[T any](v T) *T { return &v }
