package daemon

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/bridge"
	"cand/config"
	"cand/mcp2515"
	"cand/metrics"
	"cand/socketcan"
	"cand/socketcan/slcan"
)

// cmdSlack bounds how long the adapter leaves the pseudo-terminal unread while
// the owner's socket is full: the kernel's slcan waits at most 1 s for each
// command it writes (slcan_transmit_cmd in drivers/net/can/slcan/slcan-core.c),
// and its wait ends only when cand reads (a pty master's read wakes the slave's
// writer: n_tty_check_unthrottle in drivers/tty/n_tty.c).
const cmdSlack = 400 * time.Millisecond

// toKernelBatch is how many records the adapter reads from the owner's socket
// before it writes their lines to the pseudo-terminal in one write.
const toKernelBatch = 64

// slcanPort is controller i's slcan interface: the pseudo-terminal whose slave
// carries N_SLCAN (the kernel's CAN netdev) and one end of the SOCK_SEQPACKET
// socketpair whose other end the owner thread bridges, as it bridges a raw CAN
// socket. Two goroutines translate: toKernel turns the owner's frames and error
// frames into SLCAN lines, many to a write; fromKernel reads the kernel's lines,
// sends its frames to the owner in order and acts on its commands: S (bitrate:
// the controller is reprogrammed through Owner.Apply), O and C (the controller on
// and off the bus, through the link watch), F (nothing to do: O restarts the
// controller, which clears its error counters).
type slcanPort struct {
	i    int
	cc   *config.Controller
	name string
	log  *slog.Logger
	m    *metrics.Controller
	// owner runs the controller: a bitrate from the kernel is programmed through
	// owner.Apply on owner.Ports[i].
	owner *bridge.Owner
	// inForce records a bitrate the kernel set: metrics and status.
	inForce func(bt mcp2515.BitTiming)
	kickc   chan<- struct{} // the link watch's prompt to read the link state again
	links   slcanLinks
	master  *os.File     // the pseudo-terminal's master, in the runtime's poller
	closeTT func() error // closes the slave, then the master
	pair    *os.File     // the adapter's end of the socketpair, in the runtime's poller

	open     atomic.Bool   // O seen with an accepted bitrate, no C since
	refused  atomic.Bool   // the last S asked for a bitrate the MCP2515 cannot make
	gone     atomic.Bool   // the pseudo-terminal hung up: the netdev is no more
	cycling  atomic.Bool   // cand takes the netdev down and up itself (carrier after bus-off)
	rate     atomic.Uint32 // the bitrate in force
	lines    [slcan.NumKinds]atomic.Uint64
	dropped  atomic.Uint64 // kernel frames dropped: the owner's socket stayed full past cmdSlack
	badRecs  atomic.Uint64 // records from the owner that are no classic frame
	stopping atomic.Bool
	wg       sync.WaitGroup
}

// slcanLinks is what the adapter does to its netdev over rtnetlink
// (socketcan.SetLinkUp, socketcan.LinkState); tests stand in for it.
type slcanLinks interface {
	SetUp(name string, up bool) error
	IsUp(name string) (bool, error)
}

type kernelSLCANLinks struct{}

func (kernelSLCANLinks) SetUp(name string, up bool) error { return socketcan.SetLinkUp(name, up) }
func (kernelSLCANLinks) IsUp(name string) (bool, error) {
	l, err := socketcan.LinkState(name)
	return l.Up(), err
}

// start starts the adapter's two goroutines.
func (a *slcanPort) start() {
	a.wg.Add(2)
	go a.fromKernel()
	go a.toKernel()
}

// openSLCAN makes controller i's slcan netdev: a left-over interface of its name
// made by cand (vcan, vxcan) is deleted, any other refused; the pseudo-terminal
// gets N_SLCAN, the netdev is renamed to interface.name and given the configured
// bitrate, the adapter starts and the netdev is brought up (the kernel then
// writes C, S and O, which the adapter answers). The owner's end of the
// socketpair is returned; undo closes the pseudo-terminal, which unregisters
// the netdev.
func (w *wiring) openSLCAN(i int, cc *config.Controller) (int, func(), error) {
	name := cc.Interface.Name
	log := w.log.With("interface", name, "kind", cc.Interface.Kind)
	if err := clearName(name, log); err != nil {
		return -1, nil, err
	}
	tty, err := slcan.Attach()
	if err != nil {
		return -1, nil, err
	}
	fail := func(err error) (int, func(), error) {
		tty.Close()
		return -1, nil, err
	}
	if tty.Netdev != name {
		if err := socketcan.RenameLink(tty.Netdev, name); err != nil {
			return fail(fmt.Errorf("naming the slcan netdev %s %s: %w", tty.Netdev, name, err))
		}
	}
	bt, err := Timing(cc)
	if err != nil {
		return fail(err)
	}
	if err := socketcan.SetCANBitrate(name, bt.Bitrate); err != nil {
		return fail(fmt.Errorf("setting the configured bitrate on the slcan netdev: %w", err))
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fail(fmt.Errorf("socketpair for %s (interface kind slcan): %w", name, err))
	}
	for _, fd := range fds {
		if err := setSndBuf(fd, cc.Interface.RcvBuf); err != nil {
			log.Warn(err.Error())
		}
	}
	if w.slcans == nil {
		w.slcans = map[int]*slcanPort{}
		w.slcanKick = make(chan struct{}, 1)
	}
	a := &slcanPort{i: i, cc: cc, name: name, log: log, m: w.sources[i].m, owner: w.Owner,
		inForce: func(bt mcp2515.BitTiming) { w.bitrateInForce(i, cc, bt) }, kickc: w.slcanKick, links: kernelSLCANLinks{},
		master: tty.Master, closeTT: tty.Close, pair: os.NewFile(uintptr(fds[1]), "slcan adapter "+name)}
	a.rate.Store(bt.Bitrate)
	w.slcans[i] = a
	a.start()
	if err := socketcan.SetLinkUp(name, true); err != nil {
		a.close()
		unix.Close(fds[0])
		return -1, nil, fmt.Errorf("bringing the slcan netdev up: %w", err)
	}
	log.Info("slcan netdev made: a kernel CAN interface on a pseudo-terminal", "kernel_name", tty.Netdev, "bitrate", bt.Bitrate)
	return fds[0], func() {
		a.close()
		unix.Close(fds[0])
		delete(w.slcans, i)
	}, nil
}

// clearName makes name free for the slcan netdev: nothing there, or a vcan or
// vxcan (what cand made under another configuration), which is deleted.
func clearName(name string, log *slog.Logger) error {
	link, err := socketcan.LinkState(name)
	if errors.Is(err, unix.ENODEV) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("looking up %s before naming the slcan netdev so: %w", name, err)
	}
	switch link.Kind {
	case socketcan.KindVCAN, socketcan.KindVXCAN:
		if err := socketcan.DeleteLink(name); err != nil {
			return fmt.Errorf("deleting the left-over %s interface %s to put the slcan netdev in its place: %w", link.Kind, name, err)
		}
		log.Warn("deleted the left-over interface of this name to put the slcan netdev in its place", "was", link.Kind)
		return nil
	}
	what := fmt.Sprintf("kind %q", link.Kind)
	if link.Kind == "can" {
		what = "kind \"can\" (a kernel CAN driver's, or another slcan's)"
	}
	return fmt.Errorf("interface %s exists with %s: cand does not take it over; pick another interface.name, or remove what made it", name, what)
}

// close stops the adapter: the slave is closed first (the kernel writes its last
// C, which fromKernel still reads), then the master and the socketpair end.
func (a *slcanPort) close() {
	a.stopping.Store(true)
	a.closeTT()
	a.pair.Close()
	a.wg.Wait()
	var counts []any
	for k := range slcan.NumKinds {
		if n := a.lines[k].Load(); n > 0 {
			counts = append(counts, slcan.Kind(k).String(), n)
		}
	}
	a.log.Info("slcan netdev gone with its pseudo-terminal; lines read from the kernel", counts...)
	if n := a.dropped.Load(); n > 0 {
		a.log.Warn("frames from the slcan netdev dropped: the controller's queue stayed full", "frames", n)
	}
	if n := a.badRecs.Load(); n > 0 {
		a.log.Warn("records from the controller that are no classic CAN frame: not passed to the slcan netdev", "records", n)
	}
}

// linkState is the controller's link as the slcan netdev has it: up between
// the kernel's O and C (slc_open, slc_close), unless the bitrate was refused.
func (a *slcanPort) linkState() bridge.LinkState {
	switch {
	case a.gone.Load():
		return bridge.LinkGone
	case a.open.Load() && !a.refused.Load():
		return bridge.LinkUp
	}
	return bridge.LinkDown
}

// kick asks the link watch to read the controllers' link state again.
func (a *slcanPort) kick() {
	select {
	case a.kickc <- struct{}{}:
	default: // one is pending
	}
}

// fromKernel reads the kernel's lines until the pseudo-terminal closes.
func (a *slcanPort) fromKernel() {
	defer a.wg.Done()
	var lines slcan.Lines
	buf := make([]byte, 4096)
	var rec [socketcan.FrameSize]byte
	for {
		n, err := a.master.Read(buf)
		if err != nil {
			if !a.stopping.Load() {
				a.gone.Store(true)
				a.log.Error("the slcan pseudo-terminal closed under cand (slcan module removed?): the controller stays off the bus; restart cand", "err", err.Error())
				a.kick()
			}
			return
		}
		deadline := time.Now().Add(cmdSlack)
		lines.Feed(buf[:n], func(line []byte, tooLong bool) {
			if tooLong {
				a.count(slcan.Malformed, line)
				return
			}
			l := slcan.Parse(line)
			a.count(l.Kind, line)
			switch l.Kind {
			case slcan.Frame:
				socketcan.Encode(&rec, l.Frame)
				a.send(&rec, l.Frame, deadline)
			case slcan.Bitrate:
				a.setBitrate(l.Bitrate)
			case slcan.Open:
				if a.refused.Load() {
					a.log.Warn("slcan open refused: the bitrate asked for cannot be made; the interface is being set down")
				}
				a.open.Store(true)
				a.kick()
			case slcan.Close:
				if !a.cycling.Load() {
					a.open.Store(false)
					a.kick()
				}
			}
		})
	}
}

// count counts a line by kind and logs one the adapter does not take: the first
// ten of each kind, then every thousandth.
func (a *slcanPort) count(k slcan.Kind, line []byte) {
	n := a.lines[k].Add(1)
	if k != slcan.Unknown && k != slcan.Malformed {
		return
	}
	if n <= 10 || n%1000 == 0 {
		a.log.Warn("slcan: a line from the kernel that cand does not take: ignored", "kind", k.String(), "line", fmt.Sprintf("%q", line), "count", n)
	}
}

// send hands a frame from the kernel to the owner. It waits for room until
// deadline (the read's time plus cmdSlack), so that the kernel's next command is
// read in time; a frame that finds no room by then is dropped, counted in
// cand_tx_dropped_total, logged and reported to the kernel as a TX overrun
// (`e1O`: tx_errors, and CAN_ERR_CRTL_TX_OVERFLOW to candump -e).
func (a *slcanPort) send(rec *[socketcan.FrameSize]byte, f can.Frame, deadline time.Time) {
	a.pair.SetWriteDeadline(deadline)
	_, err := a.pair.Write(rec[:])
	if err == nil {
		return
	}
	if a.stopping.Load() {
		return
	}
	a.m.TXDropped.Inc()
	n := a.dropped.Add(1)
	if n <= 10 || n%1000 == 0 {
		a.log.Warn("frame from the slcan netdev dropped: the controller's queue stayed full (bus blocked or too slow)", "frame", f.String(), "err", err.Error(), "dropped", n)
	}
	a.master.Write(slcan.AppendErrors(nil, slcan.ErrTXOverrun))
}

// setBitrate acts on `Sn`: a new bitrate is programmed with the bit timing the
// configuration's rules give it (its oscillator and sample point; an explicit
// timing gives way to the new rate) through Owner.Apply, as a reload does. A
// rate the MCP2515's crystal cannot make is refused: logged, and the interface
// set down (from another goroutine: the kernel holds the RTNL lock until its
// open ends, which needs this goroutine's reads).
func (a *slcanPort) setBitrate(rate uint32) {
	if rate == a.rate.Load() {
		a.refused.Store(false)
		return
	}
	cc := *a.cc
	cc.Bitrate, cc.Timing = rate, nil
	bt, err := Timing(&cc)
	if err == nil {
		if cerr := bt.Check(); cerr != nil {
			a.log.Warn("the kernel's timing for ip link's bitrate breaks a datasheet rule; cand programs it as the kernel would", "bitrate", rate, "timing", bt.String(), "rule", cerr.Error())
		}
	}
	if err != nil {
		a.refused.Store(true)
		a.log.Error("ip link asked for a bitrate the MCP2515 cannot make with its crystal: refused, the interface is set down; the controller keeps its bitrate",
			"bitrate", rate, "oscillator_hz", cc.OscillatorHz, "err", err.Error(), "in_force", a.rate.Load())
		go func() {
			if err := a.links.SetUp(a.name, false); err != nil {
				a.log.Warn("setting the interface down after a refused bitrate", "err", err.Error())
			}
		}()
		return
	}
	a.refused.Store(false)
	cfg := controllerConfig(&cc, bt)
	now := false
	if !a.owner.Apply(func() { now = a.owner.Ports[a.i].Reprogram(cfg) }) {
		a.log.Warn("ip link's bitrate not programmed: cand is not bridging (starting or stopping)", "bitrate", rate)
		return
	}
	a.rate.Store(rate)
	a.inForce(bt)
	a.log.Info("bitrate from ip link programmed", "timing", bt.String(), "restarted_now", now)
}

// toKernel writes the owner's frames and error frames to the kernel as lines,
// every record waiting in one write, until the socketpair closes. After a
// bus-off that the controller recovered from it takes the netdev down and up:
// the kernel's slcan turned the carrier off at `sb` (can_bus_off) and only
// opening the netdev turns it on again (open_candev), while slcan has no restart
// (no do_set_mode).
func (a *slcanPort) toKernel() {
	defer a.wg.Done()
	rc, err := a.pair.SyscallConn()
	if err != nil {
		a.log.Error("slcan adapter: no raw access to the socketpair", "err", err.Error())
		return
	}
	recs := make([][socketcan.FrameSize]byte, toKernelBatch)
	out := make([]byte, 0, toKernelBatch*(slcan.MaxLine+1))
	busOff := false
	for {
		n, err := readRecords(rc, recs)
		if err != nil {
			return
		}
		out = out[:0]
		recovered := false
		for j := range n {
			var ok bool
			out, ok = slcan.AppendRecord(out, &recs[j])
			if !ok {
				a.badRecs.Add(1)
				continue
			}
			if ef, isErr := socketcan.DecodeErrorFrame(&recs[j]); isErr {
				if s, has := slcan.ErrorState(&ef); has {
					recovered = recovered || busOff && s != slcan.StateBusOff
					busOff = s == slcan.StateBusOff
				}
			}
		}
		if len(out) > 0 {
			if _, err := a.master.Write(out); err != nil {
				return
			}
		}
		if recovered {
			go a.recarrier()
		}
	}
}

// readRecords waits for the socketpair to be readable and reads what waits,
// up to len(recs) records.
func readRecords(rc interface {
	Read(func(fd uintptr) bool) error
}, recs [][socketcan.FrameSize]byte) (int, error) {
	n := 0
	var rerr error
	err := rc.Read(func(fd uintptr) bool {
		for n < len(recs) {
			k, err := unix.Read(int(fd), recs[n][:])
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case errors.Is(err, unix.EAGAIN):
				return n > 0
			case err != nil:
				rerr = err
				return true
			case k == 0:
				rerr = io.EOF
				return true
			case k == socketcan.FrameSize:
				n++
			}
		}
		return true
	})
	if err == nil && n == 0 {
		err = rerr
	}
	return n, err
}

// recarrier takes the netdev down and up after a bus-off the controller
// recovered from, if it is up: the controller stays on the bus meanwhile (the
// kernel's C and O are not passed on).
func (a *slcanPort) recarrier() {
	if up, err := a.links.IsUp(a.name); err != nil || !up {
		return
	}
	a.cycling.Store(true)
	defer a.cycling.Store(false)
	err := a.links.SetUp(a.name, false)
	if err == nil {
		err = a.links.SetUp(a.name, true)
	}
	if err != nil {
		a.log.Warn("slcan: turning the carrier on again after bus-off failed; `ip link set down` and `up` does it", "err", err.Error())
		return
	}
	a.log.Info("slcan: the controller recovered from bus-off; the interface was set down and up to turn its carrier on again")
}

// bitrateInForce records controller i's bitrate set with ip link: the bitrate
// gauge, cand_bit_timing_info and the status document.
func (w *wiring) bitrateInForce(i int, cc *config.Controller, bt mcp2515.BitTiming) {
	m := w.sources[i].m
	timing := metrics.BitTiming{BitTiming: bt, OscillatorHz: cc.OscillatorHz, SCLKHz: uint32(m.SCLKHz.Load())}
	m.Bitrate.Set(int64(bt.Bitrate))
	w.timingInfo[i].Set(timing)
	w.sources[i].conf.Store(&sourceConf{timing: timing, restartMs: *cc.RestartMs, bitrateFrom: bitrateFromIPLink})
}

// slcanRate is controller i's configuration with the bitrate in force: on a
// slcan interface whose bitrate was set with ip link, that one (ip link's wins
// while cand runs, as a kernel driver keeps its bitrate across the driver's
// settings); otherwise cc itself.
func (w *wiring) slcanRate(i int, cc *config.Controller) (*config.Controller, string) {
	a := w.slcans[i]
	if a == nil || w.sources[i].conf.Load().bitrateFrom != bitrateFromIPLink {
		return cc, ""
	}
	c := *cc
	c.Bitrate, c.Timing = a.rate.Load(), nil
	w.log.Info("reload: the controller keeps the bitrate set with ip link", "controller", cc.Name, "bitrate", c.Bitrate)
	return &c, bitrateFromIPLink
}
