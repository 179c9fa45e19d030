package socketcan

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestErrorFrameBytes(t *testing.T) {
	tests := []struct {
		name  string
		build func(e *ErrorFrame)
		bytes string
	}{
		{"tx timeout", func(e *ErrorFrame) { e.Add(CAN_ERR_TX_TIMEOUT) },
			"01000020 08 00 00 00 0000000000000000"},
		{"lost arbitration in bit 5", func(e *ErrorFrame) { e.LostArbitration(5) },
			"02000020 08 00 00 00 0500000000000000"},
		{"rx overflow", func(e *ErrorFrame) { e.Controller(CAN_ERR_CRTL_RX_OVERFLOW) },
			"04000020 08 00 00 00 0001000000000000"},
		{"warning with counters", func(e *ErrorFrame) {
			e.Controller(CAN_ERR_CRTL_RX_WARNING | CAN_ERR_CRTL_TX_WARNING)
			e.Counters(97, 100)
		}, "04020020 08 00 00 00 000c000000006164"},
		{"passive", func(e *ErrorFrame) {
			e.Controller(CAN_ERR_CRTL_TX_PASSIVE)
			e.Counters(128, 3)
		}, "04020020 08 00 00 00 0020000000008003"},
		{"back to active", func(e *ErrorFrame) {
			e.Controller(CAN_ERR_CRTL_ACTIVE)
			e.Counters(0, 0)
		}, "04020020 08 00 00 00 0040000000000000"},
		{"stuff error in data, on tx", func(e *ErrorFrame) {
			e.Add(CAN_ERR_BUSERROR)
			e.Protocol(CAN_ERR_PROT_STUFF|CAN_ERR_PROT_TX, CAN_ERR_PROT_LOC_DATA)
		}, "88000020 08 00 00 00 0000840a00000000"},
		{"transceiver CANH short to GND", func(e *ErrorFrame) { e.Transceiver(CAN_ERR_TRX_CANH_SHORT_TO_GND) },
			"10000020 08 00 00 00 0000000007000000"},
		{"no ack", func(e *ErrorFrame) { e.Add(CAN_ERR_ACK) },
			"20000020 08 00 00 00 0000000000000000"},
		{"bus off", func(e *ErrorFrame) { e.Add(CAN_ERR_BUSOFF); e.Counters(255, 0) },
			"40020020 08 00 00 00 000000000000ff00"},
		{"restarted", func(e *ErrorFrame) { e.Add(CAN_ERR_RESTARTED) },
			"00010020 08 00 00 00 0000000000000000"},
		{"Add ignores flag bits", func(e *ErrorFrame) { e.Add(0xe0000000 | CAN_ERR_ACK) },
			"20000020 08 00 00 00 0000000000000000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var e ErrorFrame
			tc.build(&e)
			var b [FrameSize]byte
			for i := range b {
				b[i] = 0xee
			}
			e.Encode(&b)
			want := hx(t, tc.bytes)
			if string(b[:]) != string(want) {
				t.Fatalf("Encode\n got %x\nwant %x", b, want)
			}
			got, ok := DecodeErrorFrame(&b)
			if !ok || got != e {
				t.Fatalf("DecodeErrorFrame = %+v %v, want %+v", got, ok, e)
			}
			if _, kind := Decode(&b); kind != FrameError {
				t.Fatalf("Decode kind %v, want error", kind)
			}
		})
	}
}

func TestDecodeErrorFrameRejectsDataFrame(t *testing.T) {
	b := [FrameSize]byte(hx(t, "23010000 02 00 00 00 dead000000000000"))
	if e, ok := DecodeErrorFrame(&b); ok || e != (ErrorFrame{}) {
		t.Fatalf("DecodeErrorFrame(data frame) = %+v, %v", e, ok)
	}
}

// The error.h values are declared here once; x/sys/unix generates the same
// names from the kernel headers, so the two sources must agree.
func TestErrorConstantsMatchKernelHeaders(t *testing.T) {
	pairs := []struct {
		name      string
		ours, sys uint64
	}{
		{"CAN_ERR_FLAG", CAN_ERR_FLAG, unix.CAN_ERR_FLAG},
		{"CAN_ERR_MASK", CAN_ERR_MASK, unix.CAN_ERR_MASK},
		{"CAN_ERR_DLC", CAN_ERR_DLC, unix.CAN_ERR_DLC},
		{"CAN_ERR_TX_TIMEOUT", CAN_ERR_TX_TIMEOUT, unix.CAN_ERR_TX_TIMEOUT},
		{"CAN_ERR_LOSTARB", CAN_ERR_LOSTARB, unix.CAN_ERR_LOSTARB},
		{"CAN_ERR_CRTL", CAN_ERR_CRTL, unix.CAN_ERR_CRTL},
		{"CAN_ERR_PROT", CAN_ERR_PROT, unix.CAN_ERR_PROT},
		{"CAN_ERR_TRX", CAN_ERR_TRX, unix.CAN_ERR_TRX},
		{"CAN_ERR_ACK", CAN_ERR_ACK, unix.CAN_ERR_ACK},
		{"CAN_ERR_BUSOFF", CAN_ERR_BUSOFF, unix.CAN_ERR_BUSOFF},
		{"CAN_ERR_BUSERROR", CAN_ERR_BUSERROR, unix.CAN_ERR_BUSERROR},
		{"CAN_ERR_RESTARTED", CAN_ERR_RESTARTED, unix.CAN_ERR_RESTARTED},
		{"CAN_ERR_CNT", CAN_ERR_CNT, unix.CAN_ERR_CNT},
		{"CAN_ERR_LOSTARB_UNSPEC", CAN_ERR_LOSTARB_UNSPEC, unix.CAN_ERR_LOSTARB_UNSPEC},
		{"CAN_ERR_CRTL_UNSPEC", CAN_ERR_CRTL_UNSPEC, unix.CAN_ERR_CRTL_UNSPEC},
		{"CAN_ERR_CRTL_RX_OVERFLOW", CAN_ERR_CRTL_RX_OVERFLOW, unix.CAN_ERR_CRTL_RX_OVERFLOW},
		{"CAN_ERR_CRTL_TX_OVERFLOW", CAN_ERR_CRTL_TX_OVERFLOW, unix.CAN_ERR_CRTL_TX_OVERFLOW},
		{"CAN_ERR_CRTL_RX_WARNING", CAN_ERR_CRTL_RX_WARNING, unix.CAN_ERR_CRTL_RX_WARNING},
		{"CAN_ERR_CRTL_TX_WARNING", CAN_ERR_CRTL_TX_WARNING, unix.CAN_ERR_CRTL_TX_WARNING},
		{"CAN_ERR_CRTL_RX_PASSIVE", CAN_ERR_CRTL_RX_PASSIVE, unix.CAN_ERR_CRTL_RX_PASSIVE},
		{"CAN_ERR_CRTL_TX_PASSIVE", CAN_ERR_CRTL_TX_PASSIVE, unix.CAN_ERR_CRTL_TX_PASSIVE},
		{"CAN_ERR_CRTL_ACTIVE", CAN_ERR_CRTL_ACTIVE, unix.CAN_ERR_CRTL_ACTIVE},
		{"CAN_ERR_PROT_UNSPEC", CAN_ERR_PROT_UNSPEC, unix.CAN_ERR_PROT_UNSPEC},
		{"CAN_ERR_PROT_BIT", CAN_ERR_PROT_BIT, unix.CAN_ERR_PROT_BIT},
		{"CAN_ERR_PROT_FORM", CAN_ERR_PROT_FORM, unix.CAN_ERR_PROT_FORM},
		{"CAN_ERR_PROT_STUFF", CAN_ERR_PROT_STUFF, unix.CAN_ERR_PROT_STUFF},
		{"CAN_ERR_PROT_BIT0", CAN_ERR_PROT_BIT0, unix.CAN_ERR_PROT_BIT0},
		{"CAN_ERR_PROT_BIT1", CAN_ERR_PROT_BIT1, unix.CAN_ERR_PROT_BIT1},
		{"CAN_ERR_PROT_OVERLOAD", CAN_ERR_PROT_OVERLOAD, unix.CAN_ERR_PROT_OVERLOAD},
		{"CAN_ERR_PROT_ACTIVE", CAN_ERR_PROT_ACTIVE, unix.CAN_ERR_PROT_ACTIVE},
		{"CAN_ERR_PROT_TX", CAN_ERR_PROT_TX, unix.CAN_ERR_PROT_TX},
		{"CAN_ERR_PROT_LOC_UNSPEC", CAN_ERR_PROT_LOC_UNSPEC, unix.CAN_ERR_PROT_LOC_UNSPEC},
		{"CAN_ERR_PROT_LOC_SOF", CAN_ERR_PROT_LOC_SOF, unix.CAN_ERR_PROT_LOC_SOF},
		{"CAN_ERR_PROT_LOC_ID28_21", CAN_ERR_PROT_LOC_ID28_21, unix.CAN_ERR_PROT_LOC_ID28_21},
		{"CAN_ERR_PROT_LOC_ID20_18", CAN_ERR_PROT_LOC_ID20_18, unix.CAN_ERR_PROT_LOC_ID20_18},
		{"CAN_ERR_PROT_LOC_SRTR", CAN_ERR_PROT_LOC_SRTR, unix.CAN_ERR_PROT_LOC_SRTR},
		{"CAN_ERR_PROT_LOC_IDE", CAN_ERR_PROT_LOC_IDE, unix.CAN_ERR_PROT_LOC_IDE},
		{"CAN_ERR_PROT_LOC_ID17_13", CAN_ERR_PROT_LOC_ID17_13, unix.CAN_ERR_PROT_LOC_ID17_13},
		{"CAN_ERR_PROT_LOC_ID12_05", CAN_ERR_PROT_LOC_ID12_05, unix.CAN_ERR_PROT_LOC_ID12_05},
		{"CAN_ERR_PROT_LOC_ID04_00", CAN_ERR_PROT_LOC_ID04_00, unix.CAN_ERR_PROT_LOC_ID04_00},
		{"CAN_ERR_PROT_LOC_RTR", CAN_ERR_PROT_LOC_RTR, unix.CAN_ERR_PROT_LOC_RTR},
		{"CAN_ERR_PROT_LOC_RES1", CAN_ERR_PROT_LOC_RES1, unix.CAN_ERR_PROT_LOC_RES1},
		{"CAN_ERR_PROT_LOC_RES0", CAN_ERR_PROT_LOC_RES0, unix.CAN_ERR_PROT_LOC_RES0},
		{"CAN_ERR_PROT_LOC_DLC", CAN_ERR_PROT_LOC_DLC, unix.CAN_ERR_PROT_LOC_DLC},
		{"CAN_ERR_PROT_LOC_DATA", CAN_ERR_PROT_LOC_DATA, unix.CAN_ERR_PROT_LOC_DATA},
		{"CAN_ERR_PROT_LOC_CRC_SEQ", CAN_ERR_PROT_LOC_CRC_SEQ, unix.CAN_ERR_PROT_LOC_CRC_SEQ},
		{"CAN_ERR_PROT_LOC_CRC_DEL", CAN_ERR_PROT_LOC_CRC_DEL, unix.CAN_ERR_PROT_LOC_CRC_DEL},
		{"CAN_ERR_PROT_LOC_ACK", CAN_ERR_PROT_LOC_ACK, unix.CAN_ERR_PROT_LOC_ACK},
		{"CAN_ERR_PROT_LOC_ACK_DEL", CAN_ERR_PROT_LOC_ACK_DEL, unix.CAN_ERR_PROT_LOC_ACK_DEL},
		{"CAN_ERR_PROT_LOC_EOF", CAN_ERR_PROT_LOC_EOF, unix.CAN_ERR_PROT_LOC_EOF},
		{"CAN_ERR_PROT_LOC_INTERM", CAN_ERR_PROT_LOC_INTERM, unix.CAN_ERR_PROT_LOC_INTERM},
		{"CAN_ERR_TRX_UNSPEC", CAN_ERR_TRX_UNSPEC, unix.CAN_ERR_TRX_UNSPEC},
		{"CAN_ERR_TRX_CANH_NO_WIRE", CAN_ERR_TRX_CANH_NO_WIRE, unix.CAN_ERR_TRX_CANH_NO_WIRE},
		{"CAN_ERR_TRX_CANH_SHORT_TO_BAT", CAN_ERR_TRX_CANH_SHORT_TO_BAT, unix.CAN_ERR_TRX_CANH_SHORT_TO_BAT},
		{"CAN_ERR_TRX_CANH_SHORT_TO_VCC", CAN_ERR_TRX_CANH_SHORT_TO_VCC, unix.CAN_ERR_TRX_CANH_SHORT_TO_VCC},
		{"CAN_ERR_TRX_CANH_SHORT_TO_GND", CAN_ERR_TRX_CANH_SHORT_TO_GND, unix.CAN_ERR_TRX_CANH_SHORT_TO_GND},
		{"CAN_ERR_TRX_CANL_NO_WIRE", CAN_ERR_TRX_CANL_NO_WIRE, unix.CAN_ERR_TRX_CANL_NO_WIRE},
		{"CAN_ERR_TRX_CANL_SHORT_TO_BAT", CAN_ERR_TRX_CANL_SHORT_TO_BAT, unix.CAN_ERR_TRX_CANL_SHORT_TO_BAT},
		{"CAN_ERR_TRX_CANL_SHORT_TO_VCC", CAN_ERR_TRX_CANL_SHORT_TO_VCC, unix.CAN_ERR_TRX_CANL_SHORT_TO_VCC},
		{"CAN_ERR_TRX_CANL_SHORT_TO_GND", CAN_ERR_TRX_CANL_SHORT_TO_GND, unix.CAN_ERR_TRX_CANL_SHORT_TO_GND},
		{"CAN_ERR_TRX_CANL_SHORT_TO_CANH", CAN_ERR_TRX_CANL_SHORT_TO_CANH, unix.CAN_ERR_TRX_CANL_SHORT_TO_CANH},
		{"CAN_ERROR_WARNING_THRESHOLD", CAN_ERROR_WARNING_THRESHOLD, unix.CAN_ERROR_WARNING_THRESHOLD},
		{"CAN_ERROR_PASSIVE_THRESHOLD", CAN_ERROR_PASSIVE_THRESHOLD, unix.CAN_ERROR_PASSIVE_THRESHOLD},
		{"CAN_BUS_OFF_THRESHOLD", CAN_BUS_OFF_THRESHOLD, unix.CAN_BUS_OFF_THRESHOLD},
		{"CAN_MTU", CAN_MTU, unix.CAN_MTU},
		{"CAN_EFF_FLAG", canEFFFlag, unix.CAN_EFF_FLAG},
		{"CAN_RTR_FLAG", canRTRFlag, unix.CAN_RTR_FLAG},
		{"CAN_SFF_MASK", canSFFMask, unix.CAN_SFF_MASK},
		{"CAN_EFF_MASK", canEFFMask, unix.CAN_EFF_MASK},
	}
	for _, p := range pairs {
		if p.ours != p.sys {
			t.Errorf("%s = %#x, x/sys/unix says %#x", p.name, p.ours, p.sys)
		}
	}
}
