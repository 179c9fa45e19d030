package socketcan

import (
	"testing"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"
)

func socketPair(t *testing.T, typ int) (a, b int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, typ|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socketpair: %v", err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

// readFrames reads what b holds, each record one frame.
func readFrames(t *testing.T, fd int) []can.Frame {
	t.Helper()
	var got []can.Frame
	for {
		var in [FrameSize]byte
		n, err := ReadFrame(fd, &in, nil)
		if err == unix.EAGAIN {
			return got
		}
		if err != nil || n != FrameSize {
			t.Fatalf("ReadFrame = %d, %v", n, err)
		}
		f, _ := Decode(&in)
		got = append(got, f)
	}
}

// A batch of two is two records in their order, one frame each, on both kinds
// of socketpair the tests stand in for a CAN socket with; a batch of one too.
func TestBatchWritesFramesInOrder(t *testing.T) {
	f1 := can.Frame{ID: 0x123, Length: 8, Data: can.Data{1, 2, 3, 4, 5, 6, 7, 8}}
	f2 := can.Frame{ID: 0x18DA00F1, IsExtended: true, Length: 0}
	for _, typ := range []int{unix.SOCK_SEQPACKET, unix.SOCK_DGRAM} {
		a, b := socketPair(t, typ)
		var batch Batch
		if !batch.Add(f1) || !batch.Add(f2) || batch.Len() != 2 {
			t.Fatalf("Add: Len %d", batch.Len())
		}
		if batch.Add(f1) {
			t.Fatalf("a third frame was added to a batch of %d", MaxBatch)
		}
		if errs := batch.Write(a); errs != [MaxBatch]error{} {
			t.Fatalf("socket type %d: Write = %v; want no error", typ, errs)
		}
		batch.Reset()
		batch.Add(f2)
		if errs := batch.Write(a); errs != [MaxBatch]error{} {
			t.Fatalf("socket type %d: Write of one = %v; want no error", typ, errs)
		}
		got := readFrames(t, b)
		if len(got) != 3 || got[0] != f1 || got[1] != f2 || got[2] != f2 {
			t.Errorf("socket type %d: read %v, want %v %v %v", typ, got, f1, f2, f2)
		}
	}
}

// A queue with room for one frame takes the first of two: Write returns the
// second's error, as WriteFrame gives it; a full queue refuses both.
func TestBatchWriteOneOfTwo(t *testing.T) {
	a, b := socketPair(t, unix.SOCK_DGRAM) // queue bounded by a count of datagrams
	var fill [FrameSize]byte
	queued := 0
	for ; ; queued++ {
		err := WriteFrame(a, &fill)
		if err == unix.EAGAIN {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if queued > 1<<16 {
			t.Fatal("queue never filled")
		}
	}
	var in [FrameSize]byte
	if _, err := ReadFrame(b, &in, nil); err != nil {
		t.Fatal(err)
	}
	f1, f2 := can.Frame{ID: 1, Length: 1, Data: can.Data{0xAA}}, can.Frame{ID: 2}
	var batch Batch
	batch.Add(f1)
	batch.Add(f2)
	if errs := batch.Write(a); errs != [MaxBatch]error{nil, unix.EAGAIN} {
		t.Fatalf("Write into room for one = %v; want [nil EAGAIN]", errs)
	}
	if errs := batch.Write(a); errs != [MaxBatch]error{unix.EAGAIN, unix.EAGAIN} {
		t.Fatalf("Write into a full queue = %v; want [EAGAIN EAGAIN]", errs)
	}
	got := readFrames(t, b)
	if len(got) != queued || got[len(got)-1] != f1 {
		t.Fatalf("read %d frames ending %v; want %d ending %v", len(got), got[len(got)-1], queued, f1)
	}
}

// Batch is on the frame path: it never allocates.
func TestBatchAllocatesNothing(t *testing.T) {
	a, b := seqpacketPair(t)
	var batch Batch
	var in [FrameSize]byte
	f := can.Frame{ID: 0x7ff, Length: 8}
	n := testing.AllocsPerRun(1000, func() {
		batch.Reset()
		batch.Add(f)
		batch.Add(f)
		if errs := batch.Write(a); errs != [MaxBatch]error{} {
			panic(errs[0])
		}
		ReadFrame(b, &in, nil)
		ReadFrame(b, &in, nil)
	})
	if n != 0 {
		t.Fatalf("Add, Add, Write allocate %v times, want 0", n)
	}
}

// Two frames with one sendmmsg against two writes (the socket's reader is
// this goroutine, so no wake-up is in either).
func BenchmarkBatchTwo(b *testing.B) {
	x, y := seqpacketPair(b)
	f := can.Frame{ID: 0x123, Length: 8}
	var batch Batch
	batch.Add(f)
	batch.Add(f)
	var in [FrameSize]byte
	var frame [FrameSize]byte
	Encode(&frame, f)
	b.Run("sendmmsg", func(b *testing.B) {
		for b.Loop() {
			if errs := batch.Write(x); errs != [MaxBatch]error{} {
				b.Fatal(errs)
			}
			ReadFrame(y, &in, nil)
			ReadFrame(y, &in, nil)
		}
	})
	b.Run("write-write", func(b *testing.B) {
		for b.Loop() {
			if err := WriteFrame(x, &frame); err != nil {
				b.Fatal(err)
			}
			if err := WriteFrame(x, &frame); err != nil {
				b.Fatal(err)
			}
			ReadFrame(y, &in, nil)
			ReadFrame(y, &in, nil)
		}
	})
}
