package socketcan

import (
	"encoding/binary"
	"testing"

	"go.einride.tech/can"
)

// FuzzDecodeErrorFrame: a record is an error frame exactly when can_id has
// CAN_ERR_FLAG; Decode and DecodeErrorFrame then agree, Encode writes it back as
// the kernel's drivers do (flag and classes, len CAN_ERR_DLC, pad bytes zero,
// data unchanged), and the builders given the decoded bytes make the same frame.
func FuzzDecodeErrorFrame(f *testing.F) {
	for _, s := range []string{
		"04020020 08 00 00 00 000c000000006164", // warning with counters
		"88000020 08 00 00 00 0000840a00000000", // bus error: stuff error in data, on tx
		"40020020 08 00 00 00 000000000000ff00", // bus off
		"23010000 02 00 00 00 dead000000000000", // a data frame
	} {
		f.Add(hx(f, s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var b [FrameSize]byte
		copy(b[:], in)
		id := binary.LittleEndian.Uint32(b[offsetID:])
		e, ok := DecodeErrorFrame(&b)
		fr, kind := Decode(&b)
		if ok != (id&CAN_ERR_FLAG != 0) || ok != (kind == FrameError) {
			t.Fatalf("can_id %#x: DecodeErrorFrame ok=%v, Decode kind %v", id, ok, kind)
		}
		if !ok {
			if e != (ErrorFrame{}) {
				t.Fatalf("not an error frame, but decoded %+v", e)
			}
			return
		}
		if e.Class != id&CAN_ERR_MASK || fr.ID != e.Class || fr.Data != can.Data(e.Data) || fr.Length != b[offsetLen] {
			t.Fatalf("% x: DecodeErrorFrame %+v, Decode %+v", b, e, fr)
		}
		if e.TEC() != b[offsetData+errIndexTEC] || e.REC() != b[offsetData+errIndexREC] {
			t.Fatalf("TEC/REC %d/%d from % x", e.TEC(), e.REC(), b)
		}

		var out [FrameSize]byte
		e.Encode(&out)
		want := b
		binary.LittleEndian.PutUint32(want[offsetID:], CAN_ERR_FLAG|e.Class)
		want[offsetLen], want[offsetPad], want[offsetRes0], want[offsetLen8DLC] = CAN_ERR_DLC, 0, 0, 0
		if out != want {
			t.Fatalf("Encode(%+v)\n got % x\nwant % x", e, out, want)
		}
		if back, ok := DecodeErrorFrame(&out); !ok || back != e {
			t.Fatalf("round trip of %+v: %+v %v", e, back, ok)
		}

		// The builders: each class with a payload fills its bytes, the others none.
		var built ErrorFrame
		built.Add(e.Class &^ (CAN_ERR_LOSTARB | CAN_ERR_CRTL | CAN_ERR_PROT | CAN_ERR_TRX | CAN_ERR_CNT))
		owned := [CAN_ERR_DLC]bool{}
		if e.Class&CAN_ERR_LOSTARB != 0 {
			built.LostArbitration(e.Data[errIndexLostArb])
			owned[errIndexLostArb] = true
		}
		if e.Class&CAN_ERR_CRTL != 0 {
			built.Controller(e.Data[errIndexCrtl])
			owned[errIndexCrtl] = true
		}
		if e.Class&CAN_ERR_PROT != 0 {
			built.Protocol(e.Data[errIndexProtType], e.Data[errIndexProtLoc])
			owned[errIndexProtType], owned[errIndexProtLoc] = true, true
		}
		if e.Class&CAN_ERR_TRX != 0 {
			built.Transceiver(e.Data[errIndexTrx])
			owned[errIndexTrx] = true
		}
		if e.Class&CAN_ERR_CNT != 0 {
			built.Counters(e.TEC(), e.REC())
			owned[errIndexTEC], owned[errIndexREC] = true, true
		}
		if built.Class != e.Class {
			t.Fatalf("builders made classes %#x, want %#x", built.Class, e.Class)
		}
		for i := range built.Data {
			if want := e.Data[i]; (!owned[i] && built.Data[i] != 0) || (owned[i] && built.Data[i] != want) {
				t.Fatalf("builders made data[%d] = %#x for %+v", i, built.Data[i], e)
			}
		}
	})
}
