package socketcan

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// otherNetns is a second network namespace, held by a locked thread of its
// own: do runs fn on that thread, in it.
type otherNetns struct {
	tid  int
	work chan func()
}

func newOtherNetns(t *testing.T) (*otherNetns, error) {
	n := &otherNetns{work: make(chan func())}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		n.tid = unix.Gettid()
		errc <- nil
		for fn := range n.work {
			fn()
		}
	}()
	if err := <-errc; err != nil {
		return nil, err
	}
	t.Cleanup(func() { close(n.work) })
	return n, nil
}

func (n *otherNetns) do(fn func()) {
	done := make(chan struct{})
	n.work <- func() { fn(); close(done) }
	<-done
}

// A pair whose peer is created in another namespace, by namespace file and by
// PID: veth's peer attribute has vxcan's layout (VETH_INFO_PEER = 1), so this
// checks the request against a kernel without vxcan. The peer starts there
// with its MTU, down; cand's end sees it elsewhere; a second ensure reuses the
// pair.
func TestKernelEnsurePeerInAnotherNamespace(t *testing.T) {
	inNetns(t, func(skip func(reason string)) {
		other, err := newOtherNetns(t)
		if err != nil {
			t.Errorf("second namespace: %v", err)
			return
		}
		for _, ns := range []NetNS{
			{Path: fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), other.tid)},
			{PID: other.tid},
		} {
			spec := LinkSpec{Name: "ve0", Kind: "veth", Peer: "ve1", PeerNetNS: ns, MTU: 1280}
			ref, closeNS, err := ns.open()
			if err != nil {
				t.Error(err)
				return
			}
			err = withRoute(func(rt roundTrip) error {
				lk := &linker{rt: rt}
				created, err := lk.ensureSpec(spec, ref)
				if err != nil {
					return err
				}
				if !created {
					t.Errorf("%s: first ensure: created = false", ns)
				}
				if l, err := lk.get("ve0"); err != nil || !l.PeerElsewhere || !l.Up() || l.MTU != 1280 {
					t.Errorf("%s: ve0 = %+v, %v; want its peer elsewhere, up, MTU 1280", ns, l, err)
				}
				if _, err := lk.get("ve1"); !errors.Is(err, unix.ENODEV) {
					t.Errorf("%s: ve1 in cand's namespace: %v, want ENODEV", ns, err)
				}
				if created, err := lk.ensureSpec(spec, ref); created || err != nil {
					t.Errorf("%s: second ensure = %v, %v; want false, nil", ns, created, err)
				}
				if _, err := lk.ensure("ve0", "veth", "ve1", 1280); err == nil {
					t.Errorf("%s: ensure without the namespace accepted a pair whose peer is elsewhere", ns)
				}
				return nil
			})
			closeNS()
			if errors.Is(err, unix.EOPNOTSUPP) {
				t.Logf("kernel without veth; nothing to compare against: %v", err)
				return
			}
			if err != nil {
				t.Errorf("%s: %v", ns, err)
				return
			}
			other.do(func() {
				if l, err := LinkState("ve1"); err != nil || l.Kind != "veth" || l.Up() || l.MTU != 1280 || !l.PeerElsewhere {
					t.Errorf("%s: ve1 there = %+v, %v; want veth, down, MTU 1280, its peer elsewhere", ns, l, err)
				}
			})
			if err := SetLinkUp("ve0", false); err != nil {
				t.Error(err)
			}
			if l, err := LinkState("ve0"); err != nil || l.Up() {
				t.Errorf("after SetLinkUp(false): %+v, %v", l, err)
			}
			if err := DeleteLink("ve0"); err != nil {
				t.Error(err)
			}
			other.do(func() {
				if _, err := LinkState("ve1"); !errors.Is(err, unix.ENODEV) {
					t.Errorf("%s: peer after delete: %v, want ENODEV", ns, err)
				}
			})
		}
	})
}
