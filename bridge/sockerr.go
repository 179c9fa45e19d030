package bridge

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"cand/socketcan"
)

// sockErr is what a socket error means for the port.
type sockErr int

const (
	sockFull  sockErr = iota // EAGAIN, ENOBUFS: the queue is empty (read) or full (write): back-pressure
	sockRetry                // EINTR: try again
	sockLink                 // ENETDOWN, ENODEV, ENXIO: the interface is down or gone
	sockFrame                // a record that is not one struct can_frame
	sockFatal                // anything else: no retry mends it
)

// classify sorts a socket error by its cause. A raw CAN socket reports ENETDOWN
// once its interface went down, and ENODEV once it was deleted (net/can/raw.c,
// raw_notify); can_send refuses a frame for an interface that is down with
// ENETDOWN (net/can/af_can.c); ENXIO is a device that went away under a socket.
func classify(err error) sockErr {
	switch {
	case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.ENOBUFS):
		return sockFull
	case errors.Is(err, unix.EINTR):
		return sockRetry
	case errors.Is(err, unix.ENETDOWN), errors.Is(err, unix.ENODEV), errors.Is(err, unix.ENXIO):
		return sockLink
	case errors.Is(err, socketcan.ErrFrameSize):
		return sockFrame
	}
	return sockFatal
}

// readErr handles an error of the socket read in pumpTX; more reports whether to
// read again.
func (p *Port) readErr(err error) (more bool) {
	switch classify(err) {
	case sockFull:
		p.sockReadable = false
		return false
	case sockRetry:
		return true
	case sockFrame:
		p.M.TXInvalid.Inc()
		return true
	case sockLink:
		// Reported once per event: the next read returns frames or EAGAIN.
		p.linkErr("read", err)
		return true
	}
	p.fail("read", err)
	return false
}

// writeErr handles an error of a socket write (a received frame or an error
// frame): the frame is lost on the host side and counted.
func (p *Port) writeErr(err error) {
	p.M.SocketWriteErrs.Inc()
	p.classifyWriteErr(err)
}

// classifyWriteErr acts on a socket write error by its cause (owner thread).
func (p *Port) classifyWriteErr(err error) {
	switch classify(err) {
	case sockFull, sockRetry:
	case sockLink:
		p.linkErr("write", err)
	default:
		p.fail("write", err)
	}
}

// linkErr counts and logs (once per episode) a socket error that says the
// interface is down or gone. The link watch's event takes the controller off the
// bus; the error alone does not, since it may be older than the last event.
func (p *Port) linkErr(op string, err error) {
	p.M.SocketErrors.Inc()
	if !p.linkErrs {
		p.linkErrs = true
		p.log("socket reports the interface down or gone", p.linkArgs("op", op, "err", err.Error())...)
	}
}

// fail stops the port's bridging for good after a socket error no retry mends:
// the controller leaves the bus, and the cause is counted and logged. The other
// ports carry on; cand stops once no port is left (Owner.check).
func (p *Port) fail(op string, err error) {
	if p.failed {
		return
	}
	p.M.SocketErrors.Inc()
	p.failed = true
	p.failure = fmt.Errorf("%s: socket %s: %w", p.Name, op, err)
	if !p.down {
		p.leaveBus()
		p.dropPending() // loaded, never to be reported sent
	}
	p.M.LinkUp.Set(0)
	p.updateGate()
	p.log("socket failed: controller off the bus, its interface no longer bridged", p.linkArgs("op", op, "err", err.Error(), "state", stateStopped)...)
	if p.owner != nil {
		p.owner.failures++
	}
}

// check returns an error once no port bridges any more: every socket failed.
func (o *Owner) check() error {
	if o.failures == 0 || o.failures < len(o.Ports) {
		return nil
	}
	var why []string
	for _, p := range o.Ports {
		why = append(why, p.failure.Error())
	}
	return fmt.Errorf("no controller can bridge any more: %s", strings.Join(why, "; "))
}
