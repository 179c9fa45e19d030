package bench

import (
	"context"
	"testing"
	"time"

	"cand/config"
)

func simBase(t *testing.T) *Base {
	t.Helper()
	cfg, err := config.Parse("base.yaml", []byte("controllers:\n  - bitrate: 500000\n    int_gpio: 22\n    oscillator_hz: 8000000\n    spi: {clock_hz: 8000000}\n"))
	if err != nil {
		t.Fatal(err)
	}
	b := BoardBaseOf(cfg)
	return &b
}

// The loopback scenario a real board runs, on the virtual Pi through the same
// code (RunLoopback): every frame written to cand's socket is sent, and every one
// sent in the window comes back from the chip and is read again, in order; the owner thread's ID is found the
// board's way (the thread blocked on the epoll that watches the socket) and its
// busy fraction measured; the board's wiring (INT pin, crystal, SPI clock) is
// the configuration's.
func TestLoopbackOnTheVirtualPi(t *testing.T) {
	sc := BoardSuite(Durations{Other: 300 * time.Millisecond})[1] // 500k, window on
	base := simBase(t)
	// The code path is what is checked, with every frame back: on the forgiving
	// rule, as the daemon's lossless-premise tests run (docs/clock.md). Under the
	// strict default a Pi 3 on a loaded host overflows at this rate.
	base.Hardware.SimCPU = config.SimCPUDedicated
	cfg, err := sc.Config(base)
	if err != nil {
		t.Fatal(err)
	}
	if cc := cfg.Controllers[0]; cc.IntGPIO != 22 || cc.OscillatorHz != 8_000_000 || cc.SPI.ClockHz != 8_000_000 || cc.Mode != config.ModeLoopback {
		t.Fatalf("controller %+v: want the base's wiring in loopback mode", cc)
	}
	res, err := RunLoopback(context.Background(), sc, base)
	if err != nil {
		t.Fatal(err)
	}
	// Offered RX frames are those sent by the window's end; the rest of the
	// written ones go out in the drain. Every frame comes back in order, or is lost
	// in an overflow cand reported: on a loaded host even the forgiving rule leaves
	// a rare stall of the owner thread (1 run in 300 at load average 4–6 lost one
	// frame, with its overflow), and RXnOVR is a flag, so the frames an overflow
	// lost are not counted one by one.
	if res.TXOffered == 0 || res.TXSent != res.TXOffered || res.FramesOffered == 0 || res.FramesOffered > res.TXOffered ||
		res.FramesReceived+res.FramesLost != res.FramesOffered || (res.FramesLost != 0) != (res.RXOverflows != 0) ||
		res.SeqGaps > res.FramesLost || res.Reordered != 0 || res.StrayFrames != 0 {
		t.Fatalf("TX offered %d sent %d; RX offered %d received %d lost %d gaps %d reordered %d stray %d, %d overflows: want every frame back in order, or lost with an overflow reported",
			res.TXOffered, res.TXSent, res.FramesOffered, res.FramesReceived, res.FramesLost, res.SeqGaps, res.Reordered, res.StrayFrames, res.RXOverflows)
	}
	if res.OwnerBusy <= 0 || res.OwnerBusy > 1.5 || res.OwnerBusyError != "" {
		t.Fatalf("owner busy %v (%s)", res.OwnerBusy, res.OwnerBusyError)
	}
	if st := res.Stages["tx_socket_to_done"]; st.Count == 0 || res.Stages["rx_end_to_end"].Count == 0 {
		t.Fatalf("stages %+v", res.Stages)
	}
	t.Logf("%d frames, owner busy %.2f, SPI %.2f/%.1f per RX frame, %.2f/%.1f per TX frame", res.FramesReceived, res.OwnerBusy,
		res.SPITransfersPerRXFrame, res.SPIBytesPerRXFrame, res.SPITransfersPerTXFrame, res.SPIBytesPerTXFrame)
}

// The board's SPI engine comparison, on the virtual Pi's chip: READ transfers of
// each size, polled and slept.
func TestBoardTransfersOnTheVirtualPi(t *testing.T) {
	cfg, err := config.Parse("b.yaml", []byte("controllers:\n  - bitrate: 500000\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := BoardTransfers(cfg, []int{2, 14}, 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Bytes != 2 || got[1].Bytes != 14 {
		t.Fatalf("results %+v", got)
	}
	// The sleeping engine sleeps for a transfer whose bytes are still in flight when
	// it looks: all of them, unless the host preempted the test between the start
	// and the look (then the bytes are done and nothing is slept).
	for _, x := range got {
		if x.PollP50 <= 0 || x.SleepP50 <= 0 || x.WireUs <= 0 || x.SleepSlept <= 0 || x.SleepSlept > 1 {
			t.Errorf("%d bytes: %+v", x.Bytes, x)
		}
	}
}
