package socketcan

// Tests against the running kernel. Each runs in a fresh network namespace
// on a thread of its own, so nothing is left behind on the host. On a kernel
// without CAN support (the build machines) the tests that need vcan or vxcan
// check the error and skip, naming what is missing; the VM tier (vm/, modules
// can, can-raw, vcan, vxcan) runs them for real, as root:
//
//	CGO_ENABLED=0 go test -c -o socketcan.test ./socketcan
//	./socketcan.test -test.run Kernel -test.v

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"
)

// inNetns runs fn on a locked OS thread moved into a new network
// namespace. The thread is never unlocked, so it exits with the goroutine
// and the namespace cannot leak into other goroutines. fn must report with
// t.Error, not t.Fatal or t.Skip (it is not the test goroutine); skip ends
// fn, and the test is then skipped with that reason.
func inNetns(t *testing.T, fn func(skip func(reason string))) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (CAP_SYS_ADMIN for unshare, CAP_NET_ADMIN for links)")
	}
	errc := make(chan error, 1)
	var reason string // written before errc is closed
	go func() {
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		defer close(errc)
		fn(func(r string) {
			reason = r
			runtime.Goexit()
		})
	}()
	if err := <-errc; err != nil {
		t.Skipf("cannot create a network namespace: %v", err)
	}
	if reason != "" {
		t.Skip(reason)
	}
}

func TestKernelLinkStateLoopback(t *testing.T) {
	inNetns(t, func(skip func(string)) {
		l, err := LinkState("lo")
		if err != nil || l.Index != 1 || l.Name != "lo" || l.Kind != "" || l.Up() {
			t.Errorf("LinkState(lo) in a new netns = %+v, %v; want index 1, no kind, down", l, err)
			return
		}
		if err := LinkUp("lo"); err != nil {
			t.Error(err)
		}
		if l, err = LinkState("lo"); err != nil || !l.Up() {
			t.Errorf("after LinkUp: %+v, %v", l, err)
		}
		if _, err := LinkState("nosuch0"); !errors.Is(err, unix.ENODEV) {
			t.Errorf("LinkState(nosuch0) = %v, want ENODEV", err)
		}
	})
}

func TestKernelEnsureRefusesLoopback(t *testing.T) {
	inNetns(t, func(skip func(string)) {
		_, err := EnsureLink("lo", KindVCAN, "", CAN_MTU)
		if err == nil || !strings.Contains(err.Error(), "interface lo exists with no link kind") {
			t.Errorf("EnsureLink(lo) = %v, want a refusal", err)
		}
	})
}

// veth's peer attribute has vxcan's layout (VETH_INFO_PEER = 1: ifinfomsg +
// IFLA_IFNAME), so this checks the vxcan request against a kernel that has
// no vxcan.
func TestKernelEnsureVethPair(t *testing.T) {
	inNetns(t, func(skip func(string)) {
		err := withRoute(func(rt roundTrip) error {
			lk := &linker{rt: rt}
			created, err := lk.ensure("ve0", "veth", "ve1", 1280)
			if err != nil {
				return err
			}
			if !created {
				t.Error("first ensure: created = false")
			}
			for _, name := range []string{"ve0", "ve1"} {
				l, err := lk.get(name)
				if err != nil || l.Kind != "veth" || l.MTU != 1280 || !l.Up() || l.PeerIndex == 0 {
					t.Errorf("%s = %+v, %v; want veth, MTU 1280, up, with a peer", name, l, err)
				}
			}
			if created, err = lk.ensure("ve0", "veth", "ve1", 1280); created || err != nil {
				t.Errorf("second ensure = %v, %v; want false, nil", created, err)
			}
			if err := lk.del("ve0"); err != nil {
				return err
			}
			if _, err := lk.get("ve1"); !errors.Is(err, unix.ENODEV) {
				t.Errorf("peer after delete: %v, want ENODEV", err)
			}
			return nil
		})
		if err != nil {
			if errors.Is(err, unix.EOPNOTSUPP) {
				skip(fmt.Sprintf("kernel without veth, nothing to compare the vxcan request against: %v", err))
			}
			t.Error(err)
		}
	})
}

// ensureOrSkip creates a CAN link and reports whether it is ready; on a
// kernel without the module it checks the error explains the fix and skips.
func ensureOrSkip(t *testing.T, skip func(string), name string, kind Kind, peer string) bool {
	created, err := EnsureLink(name, kind, peer, CAN_MTU)
	if errors.Is(err, unix.EOPNOTSUPP) {
		if !strings.Contains(err.Error(), "modprobe "+string(kind)) {
			t.Errorf("error without the fix: %v", err)
		}
		skip(fmt.Sprintf("kernel without %s (its error checked; the VM tier runs this test): %v", kind, err))
	}
	if err != nil || !created {
		t.Errorf("EnsureLink(%s) = %v, %v", name, created, err)
		return false
	}
	l, err := LinkState(name)
	if err != nil || l.Kind != kind || l.MTU != CAN_MTU || !l.Up() {
		t.Errorf("LinkState(%s) = %+v, %v; want %s, MTU 16, up", name, l, err, kind)
		return false
	}
	return true
}

// otherSocket is another program on the host (candump, cansend): a plain
// raw socket that also receives error frames.
func otherSocket(t *testing.T, ifindex int) int {
	fd, err := unix.Socket(unix.AF_CAN, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.CAN_RAW)
	if err != nil {
		t.Errorf("socket: %v", err)
		return -1
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_CAN_RAW, unix.CAN_RAW_ERR_FILTER, CAN_ERR_MASK); err != nil {
		t.Errorf("CAN_RAW_ERR_FILTER: %v", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrCAN{Ifindex: ifindex}); err != nil {
		t.Errorf("bind: %v", err)
	}
	return fd
}

// waitFrame polls fd for one frame. Loopback and vxcan deliver through the
// softirq backlog (netif_rx), so wait for the event with a deadline, a long one:
// the VM's CPU is emulated, and slower still on a loaded host.
// A signal (the Go runtime preempts with SIGURG) ends the poll early: poll again.
func waitFrame(fd int, b *[FrameSize]byte, drops *uint32) error {
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := unix.Poll(pfd, max(int(time.Until(deadline)/time.Millisecond), 0)+1)
		if n > 0 {
			break
		}
		if (err != nil && err != unix.EINTR) || time.Now().After(deadline) {
			return fmt.Errorf("no frame within 10s (poll: %v)", err)
		}
	}
	_, err := ReadFrame(fd, b, drops)
	return err
}

func TestKernelVCANSocket(t *testing.T) {
	inNetns(t, func(skip func(string)) {
		if !ensureOrSkip(t, skip, "vcan0", KindVCAN, "") {
			return
		}
		s, err := Open("vcan0", Options{RcvBuf: 4096})
		if err != nil {
			t.Errorf("Open: %v", err)
			return
		}
		defer s.Close()
		other := otherSocket(t, s.Ifindex())
		defer unix.Close(other)

		var out, in [FrameSize]byte
		Encode(&out, can.Frame{ID: 0x123, Length: 2, Data: can.Data{0xca, 0xfe}})
		if err := WriteFrame(s.Fd(), &out); err != nil {
			t.Errorf("cand write: %v", err)
		}
		if err := waitFrame(other, &in, nil); err != nil || in != out {
			t.Errorf("other socket got %x, %v; want %x", in, err, out)
		}
		if _, err := ReadFrame(s.Fd(), &in, nil); err != unix.EAGAIN {
			t.Errorf("cand saw its own write (%v): RECV_OWN_MSGS must be off", err)
		}
		Encode(&out, can.Frame{ID: 0x1abcdef, IsExtended: true, Length: 8, Data: can.Data{1, 2, 3, 4, 5, 6, 7, 8}})
		if err := WriteFrame(other, &out); err != nil {
			t.Errorf("other write: %v", err)
		}
		if err := waitFrame(s.Fd(), &in, nil); err != nil || in != out {
			t.Errorf("cand got %x, %v; want %x", in, err, out)
		}

		// cand writes error frames in the kernel's format; candump -e sees them.
		var e ErrorFrame
		e.Controller(CAN_ERR_CRTL_RX_PASSIVE)
		e.Counters(3, 128)
		e.Encode(&out)
		if err := WriteFrame(s.Fd(), &out); err != nil {
			t.Errorf("cand error-frame write: %v", err)
		}
		if err := waitFrame(other, &in, nil); err != nil || in != out {
			t.Errorf("other socket got %x, %v; want error frame %x", in, err, out)
		}

		// Overrun cand's small receive queue: the kernel counts the drops
		// and reports them in SO_RXQ_OVFL. It stamps each frame with the
		// socket's drop count as it queues it (sock_skb_set_dropcount,
		// include/net/sock.h), so the frames that filled the queue carry the
		// count from before the overrun: the drops show on the first frame
		// queued after them.
		Encode(&out, can.Frame{ID: 0x42, Length: 1})
		for range 2000 {
			if err := WriteFrame(other, &out); err != nil && err != unix.EAGAIN && err != unix.ENOBUFS {
				t.Errorf("flood: %v", err)
				break
			}
		}
		var drops uint32
		drain := func() {
			for {
				_, err := ReadFrame(s.Fd(), &in, &drops)
				if err == unix.EAGAIN {
					return
				}
				if err != nil {
					t.Errorf("drain: %v", err)
					return
				}
			}
		}
		drain()
		Encode(&out, can.Frame{ID: 0x43, Length: 1})
		if err := WriteFrame(other, &out); err != nil {
			t.Errorf("write after the flood: %v", err)
		}
		// Flood frames still in the softirq backlog may come first.
		for in != out {
			if err := waitFrame(s.Fd(), &in, &drops); err != nil {
				t.Errorf("the frame after the flood (%x): %v", out, err)
				break
			}
		}
		if drops == 0 {
			t.Errorf("no SO_RXQ_OVFL drop count after overrunning a %d-byte receive buffer", s.RcvBuf())
		}
		if err := DeleteLink("vcan0"); err != nil {
			t.Error(err)
		}
	})
}

func TestKernelVXCANPair(t *testing.T) {
	inNetns(t, func(skip func(string)) {
		if !ensureOrSkip(t, skip, "vxcan0", KindVXCAN, "vxcan1") {
			return
		}
		if l, err := LinkState("vxcan1"); err != nil || l.MTU != CAN_MTU || !l.Up() {
			t.Errorf("peer = %+v, %v; want MTU 16, up", l, err)
		}
		s, err := Open("vxcan0", Options{})
		if err != nil {
			t.Errorf("Open: %v", err)
			return
		}
		defer s.Close()
		peer, err := LinkState("vxcan1")
		if err != nil {
			t.Error(err)
			return
		}
		other := otherSocket(t, peer.Index)
		defer unix.Close(other)
		var out, in [FrameSize]byte
		Encode(&out, can.Frame{ID: 0x7ff, Length: 0})
		if err := WriteFrame(s.Fd(), &out); err != nil {
			t.Errorf("write: %v", err)
		}
		if err := waitFrame(other, &in, nil); err != nil || in != out {
			t.Errorf("peer side got %x, %v; want %x", in, err, out)
		}
		if err := DeleteLink("vxcan0"); err != nil {
			t.Error(err)
		}
	})
}

func TestKernelOpenErrors(t *testing.T) {
	inNetns(t, func(skip func(string)) {
		_, err := Open("lo", Options{})
		switch {
		case errors.Is(err, unix.EAFNOSUPPORT):
			if !strings.Contains(err.Error(), "modprobe can-raw") {
				t.Errorf("error without the fix: %v", err)
			}
			t.Logf("kernel without AF_CAN (error checked): %v", err)
		case err == nil:
			t.Error("Open(lo) succeeded: a CAN socket bound to loopback")
		}
		_, err = Open("nosuch0", Options{})
		if err == nil || (!errors.Is(err, unix.EAFNOSUPPORT) && !strings.Contains(err.Error(), "create it first")) {
			t.Errorf("Open(nosuch0) = %v", err)
		}
	})
}
