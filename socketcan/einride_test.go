package socketcan

// Cross-checks against go.einride.tech/can/pkg/socketcan, whose Frame codec
// Encode and Decode use, and whose error-frame decoder must read cand's error
// frames the same way.

import (
	"testing"

	"go.einride.tech/can"
	"go.einride.tech/can/pkg/socketcan"
)

func TestEinrideDecodesOurErrorFrames(t *testing.T) {
	var e ErrorFrame
	e.LostArbitration(9)
	e.Controller(CAN_ERR_CRTL_RX_WARNING | CAN_ERR_CRTL_TX_PASSIVE)
	e.Protocol(CAN_ERR_PROT_FORM, CAN_ERR_PROT_LOC_CRC_DEL)
	e.Transceiver(CAN_ERR_TRX_CANL_SHORT_TO_GND)
	e.Counters(130, 97)
	var b [FrameSize]byte
	e.Encode(&b)

	var f socketcan.Frame
	f.UnmarshalBinary(b[:])
	if !f.IsError() {
		t.Fatal("einride: IsError() = false")
	}
	got := f.DecodeErrorFrame()
	want := socketcan.ErrorFrame{
		// einride's ErrorClass has no CAN_ERR_CNT; it keeps the bit as is.
		ErrorClass:                     socketcan.ErrorClass(CAN_ERR_LOSTARB | CAN_ERR_CRTL | CAN_ERR_PROT | CAN_ERR_TRX | CAN_ERR_CNT),
		LostArbitrationBit:             9,
		ControllerError:                socketcan.ControllerErrorRxWarning | socketcan.ControllerErrorTxPassive,
		ProtocolError:                  socketcan.ProtocolViolationErrorFrameFormat,
		ProtocolViolationErrorLocation: socketcan.ProtocolViolationErrorLocationCRCDelimiter,
		TransceiverError:               socketcan.TransceiverErrorCANLShortToGND,
		ControllerSpecificInformation:  [3]byte{0, 130, 97}, // data[5..7]: reserved, TEC, REC
	}
	if got != want {
		t.Fatalf("einride decoded\n%+v\nwant\n%+v", got, want)
	}
}

func TestEinrideFrameAgrees(t *testing.T) {
	for _, cf := range []can.Frame{
		{ID: 0x123, Length: 2, Data: can.Data{0xde, 0xad}},
		{ID: 0x1fffffff, IsExtended: true, Length: 8, Data: can.Data{1, 2, 3, 4, 5, 6, 7, 8}},
		{ID: 0x100, IsRemote: true, Length: 4},
	} {
		var ours, theirs [FrameSize]byte
		Encode(&ours, cf)
		var f socketcan.Frame
		f.EncodeFrame(cf)
		f.MarshalBinary(theirs[:])
		if ours != theirs {
			t.Errorf("%v: ours %x, einride %x", cf, ours, theirs)
		}
		f.UnmarshalBinary(ours[:])
		if got := f.DecodeFrame(); got != cf {
			t.Errorf("einride decoded %v, want %v", got, cf)
		}
	}
}

// Would einride's codec do on the hot path? It does not allocate either;
// cand keeps its own because importing pkg/socketcan drags in x/net.
func TestEinrideCodecAllocs(t *testing.T) {
	var b [FrameSize]byte
	var f socketcan.Frame
	cf := can.Frame{ID: 0x123, Length: 8}
	n := testing.AllocsPerRun(1000, func() {
		f.EncodeFrame(cf)
		f.MarshalBinary(b[:])
		f.UnmarshalBinary(b[:])
		cf = f.DecodeFrame()
		_ = f.DecodeErrorFrame()
	})
	t.Logf("einride Frame Encode/Marshal/Unmarshal/Decode/DecodeErrorFrame: %v allocs", n)
	if n != 0 {
		t.Errorf("einride codec allocates %v times", n)
	}
}
