package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// canFrameSize is sizeof(struct can_frame) (linux/can.h): can_id u32, len u8,
// __pad, __res0, len8_dlc, data[8].
const canFrameSize = 16

// runPeer plays a periodic peer and an answering peer on a SocketCAN interface
// until SIGTERM/SIGINT or -for elapses:
//
//	vmcheck peer -if vcan0 -periodic 0x100 -period 10ms -dlc 8 -counter 2 -answer 0x123:0x124
//
// Periodic frames carry a big-endian counter in their first -counter bytes, then
// zeros. Answers carry the request's data with the answer ID.
func runPeer(args []string, errOut io.Writer) int {
	fs := flag.NewFlagSet("vmcheck peer", flag.ContinueOnError)
	fs.SetOutput(errOut)
	ifname := fs.String("if", "vcan0", "SocketCAN interface")
	periodic := fs.String("periodic", "", "hex ID of the periodic frames (empty: none)")
	period := fs.Duration("period", 10*time.Millisecond, "period of the periodic frames")
	dlc := fs.Int("dlc", 8, "DLC of the periodic frames")
	ctr := fs.Int("counter", 2, "bytes of big-endian counter at the start of periodic frames")
	answer := fs.String("answer", "", "REQ:ANS hex IDs: answer each REQ frame with ANS, same data (empty: none)")
	dur := fs.Duration("for", 0, "stop after this long (0: until SIGTERM)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dlc < 0 || *dlc > 8 || *ctr < 0 || *ctr > *dlc {
		fmt.Fprintf(errOut, "vmcheck peer: -dlc %d / -counter %d: want 0 ≤ counter ≤ dlc ≤ 8\n", *dlc, *ctr)
		return 2
	}
	fd, err := openRaw(*ifname)
	if err != nil {
		fmt.Fprintf(errOut, "vmcheck peer: %v\n", err)
		return 1
	}
	defer unix.Close(fd)

	fail := make(chan error, 2)
	if *periodic != "" {
		id, err := parseHexID(*periodic)
		if err != nil {
			fmt.Fprintf(errOut, "vmcheck peer: -periodic: %v\n", err)
			return 2
		}
		go func() { fail <- sendPeriodic(fd, id, *period, *dlc, *ctr) }()
	}
	if *answer != "" {
		var req, ans uint32
		a, b, _ := strings.Cut(*answer, ":")
		if req, err = parseHexID(a); err == nil {
			ans, err = parseHexID(b)
		}
		if err != nil {
			fmt.Fprintf(errOut, "vmcheck peer: -answer %q: want REQ:ANS hex IDs: %v\n", *answer, err)
			return 2
		}
		go func() { fail <- answerLoop(fd, req, ans) }()
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	var timeout <-chan time.Time
	if *dur > 0 {
		timeout = time.After(*dur)
	}
	select {
	case <-sig:
	case <-timeout:
	case err := <-fail:
		fmt.Fprintf(errOut, "vmcheck peer: %v\n", err)
		return 1
	}
	return 0
}

// openRaw opens a CAN_RAW socket bound to ifname.
func openRaw(ifname string) (int, error) {
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return -1, fmt.Errorf("interface %s: %v (create it first: ip link add %s type vcan)", ifname, err, ifname)
	}
	fd, err := unix.Socket(unix.AF_CAN, unix.SOCK_RAW, unix.CAN_RAW)
	if err != nil {
		return -1, fmt.Errorf("socket(AF_CAN, SOCK_RAW, CAN_RAW): %v (is can-raw.ko loaded?)", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrCAN{Ifindex: ifi.Index}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind CAN_RAW to %s: %v", ifname, err)
	}
	return fd, nil
}

func sendPeriodic(fd int, id uint32, period time.Duration, dlc, ctr int) error {
	var buf [canFrameSize]byte
	binary.NativeEndian.PutUint32(buf[0:4], id)
	buf[4] = byte(dlc)
	t := time.NewTicker(period)
	defer t.Stop()
	for n := uint64(0); ; n++ {
		for i := 0; i < ctr; i++ {
			buf[8+i] = byte(n >> (8 * uint(ctr-1-i)))
		}
		if err := writeFrame(fd, buf[:]); err != nil {
			return fmt.Errorf("periodic %#x: %v", id, err)
		}
		<-t.C
	}
}

func answerLoop(fd int, req, ans uint32) error {
	var buf [canFrameSize]byte
	for {
		n, err := unix.Read(fd, buf[:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read: %v", err)
		}
		if n != canFrameSize || binary.NativeEndian.Uint32(buf[0:4]) != req {
			continue
		}
		binary.NativeEndian.PutUint32(buf[0:4], ans)
		if err := writeFrame(fd, buf[:]); err != nil {
			return fmt.Errorf("answer %#x: %v", ans, err)
		}
	}
}

// writeFrame writes one frame, waiting out ENOBUFS (a full device queue) as cangen -p does.
func writeFrame(fd int, b []byte) error {
	for {
		_, err := unix.Write(fd, b)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
		case errors.Is(err, unix.ENOBUFS):
			time.Sleep(time.Millisecond)
		default:
			return err
		}
	}
}
