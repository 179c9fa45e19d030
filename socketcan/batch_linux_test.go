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
		if n, err := batch.Write(a, 0); n != 2 || err != nil {
			t.Fatalf("socket type %d: Write = %d, %v; want 2, nil", typ, n, err)
		}
		batch.Reset()
		batch.Add(f2)
		if n, err := batch.Write(a, 0); n != 1 || err != nil {
			t.Fatalf("socket type %d: Write of one = %d, %v; want 1, nil", typ, n, err)
		}
		got := readFrames(t, b)
		if len(got) != 3 || got[0] != f1 || got[1] != f2 || got[2] != f2 {
			t.Errorf("socket type %d: read %v, want %v %v %v", typ, got, f1, f2, f2)
		}
	}
}

// A queue with room for one frame takes the first of two: Write says so and
// returns the second's error, as WriteFrame gives it.
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
	n, err := batch.Write(a, 0)
	if n != 1 || err != unix.EAGAIN {
		t.Fatalf("Write into room for one = %d, %v; want 1, EAGAIN", n, err)
	}
	if n, err := batch.Write(a, 1); n != 0 || err != unix.EAGAIN {
		t.Fatalf("Write of the second into a full queue = %d, %v; want 0, EAGAIN", n, err)
	}
	got := readFrames(t, b)
	if len(got) != queued || got[len(got)-1] != f1 {
		t.Fatalf("read %d frames ending %v; want %d ending %v", len(got), got[len(got)-1], queued, f1)
	}
	if n, err := batch.Write(a, 1); n != 1 || err != nil {
		t.Fatalf("Write of the second after the queue emptied = %d, %v; want 1, nil", n, err)
	}
	if got := readFrames(t, b); len(got) != 1 || got[0] != f2 {
		t.Fatalf("read %v, want %v", got, f2)
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
		if n, err := batch.Write(a, 0); n != 2 || err != nil {
			panic(err)
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
	b.Run("sendmmsg", func(b *testing.B) {
		for b.Loop() {
			if n, err := batch.Write(x, 0); n != 2 || err != nil {
				b.Fatal(n, err)
			}
			ReadFrame(y, &in, nil)
			ReadFrame(y, &in, nil)
		}
	})
	b.Run("write-write", func(b *testing.B) {
		for b.Loop() {
			if n, err := batch.Write(x, 0+1); n != 1 || err != nil {
				b.Fatal(n, err)
			}
			if n, err := batch.Write(x, 1); n != 1 || err != nil {
				b.Fatal(n, err)
			}
			ReadFrame(y, &in, nil)
			ReadFrame(y, &in, nil)
		}
	})
}
