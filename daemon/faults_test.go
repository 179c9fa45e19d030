package daemon

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/bridge"
	"cand/config"
	"cand/internal/waitfor"
	"cand/sim"
	"cand/sim/canbus"
	"cand/socketcan"
)

// The fault matrix: each fault cand must survive (or exit for, cleanly), with
// what it logs and counts. docs/faults.md describes the behaviours.

// next reads controller i's frames until one satisfies match, within 5 s; the
// frames before it (other IDs, controller-state and overflow error frames) are
// skipped.
func (r *rig) next(i int, what string, match func(can.Frame) bool) can.Frame {
	r.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	var skipped []can.Frame
	for {
		f, k, err := r.read(i, time.Until(deadline))
		if err != nil {
			r.t.Fatalf("waiting for %s on controller %d: %v (skipped %d frames: %v)", what, i, err, len(skipped), tail(skipped))
		}
		if k != socketcan.FrameError && match(f) {
			return f
		}
		skipped = append(skipped, f)
	}
}

func tail(fs []can.Frame) []can.Frame { return fs[max(len(fs)-5, 0):] }

func id(want uint32) func(can.Frame) bool { return func(f can.Frame) bool { return f.ID == want } }

func frameOf(want can.Frame) func(can.Frame) bool { return func(f can.Frame) bool { return f == want } }

// quiet checks that nothing but error frames arrives on controller i for d.
func (r *rig) quiet(i int, d time.Duration, why string) {
	r.t.Helper()
	deadline := time.Now().Add(d)
	for {
		f, k, err := r.read(i, time.Until(deadline))
		if err != nil {
			return
		}
		if k != socketcan.FrameError {
			r.t.Fatalf("%s, yet controller %d delivered %v", why, i, f)
		}
	}
}

// linkRig runs the daemon with a link-event source, a periodic peer (0x100 every
// 10 ms) and an answering peer (ID + 1), and returns once the periodic frames flow.
// The frames that waited go out back to back once the link is up, and so do their
// answers: on the default Pi 3 at its idle clocks that can overflow the RX buffers,
// so the rig plays a Pi 4 at force_turbo (docs/clock.md).
func linkRig(t *testing.T) *rig {
	t.Helper()
	r := newRigConfig(t).board(config.SimBoardPi4).forceTurbo().withLinks().
		peer(periodicPeer("p", 10*time.Millisecond, 8, 0x100)).
		peer(answerPeer("echo", 1)).
		start()
	r.next(0, "a periodic frame", id(0x100))
	return r
}

// Interface down and up (`ip link set vcan0 down`, `up`): down, the controller is
// off the bus (STOPPED, cand_link_up 0): frames written meanwhile wait in the
// socket queue and nothing comes from the bus; up, the controller is programmed
// again, the waiting frames go out in order, and the bus's frames come in again.
func TestLinkDownAndUp(t *testing.T) {
	r := linkRig(t)
	m := r.d.Owner.Ports[0].M
	if m.LinkUp.Load() != 1 {
		t.Fatalf("cand_link_up %d while the interface is up", m.LinkUp.Load())
	}

	r.links.set(0, bridge.LinkDown)
	r.waitLog(5*time.Second, "level=WARN", `msg="interface down: controller off the bus; frames wait in the socket queue"`, "interface=vcan0", "state=STOPPED")
	waitfor.Cond(t, 5*time.Second, "cand_link_up 0", func() bool { return m.LinkUp.Load() == 0 })
	r.readAll(0, 20*time.Millisecond) // what the chip held when it left the bus
	sent := m.TXFrames.Load()
	var waiting []can.Frame
	for k := range 3 {
		f := can.Frame{ID: 0x300 + uint32(2*k), Length: 2, Data: can.Data{0xD0, byte(k)}}
		waiting = append(waiting, f)
		r.write(0, f)
	}
	r.quiet(0, 300*time.Millisecond, "the interface is down")
	if m.TXFrames.Load() != sent {
		t.Fatalf("%d frames sent while the interface was down", m.TXFrames.Load()-sent)
	}

	r.links.set(0, bridge.LinkUp)
	r.waitLog(5*time.Second, "level=INFO", `msg="interface up: controller back on the bus"`, "was=down", "state=error-active")
	if m.LinkUp.Load() != 1 {
		t.Fatalf("cand_link_up %d after the interface came up", m.LinkUp.Load())
	}
	for _, f := range waiting {
		want := f
		want.ID++
		r.next(0, fmt.Sprintf("the answer %v to a frame that waited", want), frameOf(want))
	}
	r.next(0, "a periodic frame after the interface came up", id(0x100))
	r.checkConservation()
}

// Interface deleted (`ip link del vcan0`) with interface.on_delete: recreate (the
// default): the controller leaves the bus, the interface is made again and a new
// socket bound to it, and bridging resumes on it.
func TestLinkDeletedRecreated(t *testing.T) {
	r := linkRig(t)
	m := r.d.Owner.Ports[0].M
	old := r.hostFd(0)

	r.links.set(0, bridge.LinkGone)
	r.waitLog(5*time.Second, "level=WARN", `msg="interface deleted: controller off the bus until the interface is back"`, "state=STOPPED")
	r.waitLog(5*time.Second, "level=INFO", `msg="interface recreated; a new socket is bound to it"`, "interface=vcan0")
	r.waitLog(5*time.Second, "level=INFO", `msg="interface up: controller back on the bus"`, "was=gone")
	if r.hostFd(0) == old {
		t.Fatal("the interface was recreated on the same socket")
	}
	if m.LinkUp.Load() != 1 {
		t.Fatalf("cand_link_up %d after the interface was recreated", m.LinkUp.Load())
	}
	f := can.Frame{ID: 0x321, Length: 3, Data: can.Data{1, 2, 3}}
	r.write(0, f)
	f.ID++
	r.next(0, "the answer on the recreated interface", frameOf(f))
	r.next(0, "a periodic frame on the recreated interface", id(0x100))
	r.checkConservation()
}

// Interface deleted with interface.on_delete: exit: cand stops cleanly with a
// non-zero status (for systemd to restart it) and a log line naming the cause.
func TestLinkDeletedExit(t *testing.T) {
	r := newRigConfig(t).withLinks().onDelete("exit").
		peer(periodicPeer("p", 10*time.Millisecond, 8, 0x100)).
		start()
	r.expectErr = true
	r.next(0, "a periodic frame", id(0x100))
	r.links.set(0, bridge.LinkGone)
	err := r.waitExit(10 * time.Second)
	if err == nil || err.Error() != "interface vcan0 was deleted (interface.on_delete: exit)" {
		t.Fatalf("Run returned %v; want the deleted interface as the reason", err)
	}
	r.waitLog(time.Second, "level=ERROR", `msg="interface deleted: stopping cand (interface.on_delete: exit)"`, "interface=vcan0")
	r.waitLog(time.Second, "level=INFO", "msg=stopped")
	r.checkConservation()
}

// A socket error no retry mends (here the peer closed its end: EOF) stops its own
// controller's bridging, counted and logged with the cause; the other controller
// bridges on. Once no controller can bridge, cand exits with an error naming each
// cause.
func TestSocketFailureStopsOnlyItsPort(t *testing.T) {
	r := newRigConfig(t).
		named("a", "vcan0").peer(answerPeer("echo-a", 1)).
		controller("b", "vcan1").chipSelect("ce1", false).intGPIO(24).peer(answerPeer("echo-b", 2)).
		start()
	r.expectErr = true
	echo := func(i int, n byte) {
		t.Helper()
		f := can.Frame{ID: 0x200, Length: 1, Data: can.Data{n}}
		r.write(i, f)
		f.ID += uint32(i) + 1
		r.next(i, fmt.Sprintf("the answer %v", f), frameOf(f))
	}
	echo(0, 1)
	echo(1, 1)
	if err := unix.Shutdown(r.hostFd(1), unix.SHUT_WR); err != nil {
		t.Fatal(err)
	}
	r.waitLog(5*time.Second, "level=WARN", `msg="socket failed: controller off the bus, its interface no longer bridged"`, "controller=b", "op=read", "err=EOF", "state=STOPPED")
	mb := r.d.Owner.Ports[1].M
	if mb.SocketErrors.Load() != 1 || mb.LinkUp.Load() != 0 {
		t.Fatalf("controller b: cand_socket_errors_total %d, cand_link_up %d; want 1, 0", mb.SocketErrors.Load(), mb.LinkUp.Load())
	}
	echo(0, 2)
	if err := unix.Shutdown(r.hostFd(0), unix.SHUT_WR); err != nil {
		t.Fatal(err)
	}
	err := r.waitExit(10 * time.Second)
	if err == nil || !strings.HasPrefix(err.Error(), "no controller can bridge any more: a: socket read: EOF; b: socket read: EOF") {
		t.Fatalf("Run returned %v; want both sockets' failures", err)
	}
	r.checkConservation()
}

// listenReady stands in for systemd's notification socket ($NOTIFY_SOCKET), to
// hear READY=1; no watchdog.
func listenReady(t *testing.T) *notifySocket { return newNotifySocket(t, 0) }

// expect waits up to 5 s for a notification that contains want.
func (n *notifySocket) expect(want string) {
	n.t.Helper()
	n.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	for {
		k, err := n.c.Read(buf)
		if err != nil {
			n.t.Fatalf("no %q notification: %v", want, err)
		}
		if strings.Contains(string(buf[:k]), want) {
			return
		}
	}
}

// servedWithoutChip checks a start where controller a's chip does not answer and
// b's does: READY=1 all the same, the warning for a, cand_chip_up a 0 with its link
// up, cand_chip_up b 1.
func servedWithoutChip(t *testing.T, notify *notifySocket, r *rig) {
	t.Helper()
	notify.expect("READY=1")
	r.waitLog(time.Second, "level=WARN", `msg="chip does not answer at start: its interface is served, and the chip retried with back-off"`, "controller=a")
	ma, mb := r.d.Owner.Ports[0].M, r.d.Owner.Ports[1].M
	if ma.ChipUp.Load() != 0 || ma.LinkUp.Load() != 1 || mb.ChipUp.Load() != 1 {
		t.Fatalf("cand_chip_up a %d, cand_link_up a %d, cand_chip_up b %d; want 0, 1, 1", ma.ChipUp.Load(), ma.LinkUp.Load(), mb.ChipUp.Load())
	}
}

// A chip missing at start (none fitted, or fitted with its MISO line broken, 0xFF,
// or shorted to ground, 0x00) does not stop cand: it serves its interfaces
// (READY=1), reports the chip missing (a WARN line, cand_chip_up 0), retries it
// with back-off, and bridges once it answers; frames written meanwhile wait in the
// socket queue. The other controller bridges all along. A chip cand cannot read is
// never put on the bus (cand's only write to it is RESET, which a chip that still
// hears takes to Configuration mode): it receives nothing while missing, so no node
// acknowledges the frames controller a's echo peer sends meanwhile, and the peer
// keeps them, retransmitting the first. Once the chip is back they come back to
// back, followed by the answer to the frame that waited; each is delivered in bus
// order or lost in the chip's full RX buffers, counted and reported
// (expectBurst: a Pi 3 at the 600 MHz it idles at may not read four back-to-back
// frames in time).
func TestChipAbsentAtStart(t *testing.T) {
	for _, c := range []struct {
		name        string
		miso        byte // what MISO reads while the chip is missing
		fault, mend func(sim.Node)
	}{
		{"no chip", 0xFF, func(n sim.Node) { n.Chip.Unplug(true) }, func(n sim.Node) { n.Chip.Unplug(false) }},
		{"MISO 0xff", 0xFF, func(n sim.Node) { n.Wiring.MISOStuck(0xFF) }, func(n sim.Node) { n.Wiring.MISOConnected() }},
		{"MISO 0x00", 0x00, func(n sim.Node) { n.Wiring.MISOStuck(0x00) }, func(n sim.Node) { n.Wiring.MISOConnected() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			notify := listenReady(t)
			r := newRigConfig(t).
				named("a", "vcan0").peer(answerPeer("echo-a", 1)).
				controller("b", "vcan1").chipSelect("ce1", false).intGPIO(24).peer(answerPeer("echo-b", 2)).
				beforeStart(func(pi *sim.Pi) { c.fault(pi.Node(0)) }).
				start()
			servedWithoutChip(t, notify, r)
			ma := r.d.Owner.Ports[0].M
			waiting := can.Frame{ID: 0x210, Length: 2, Data: can.Data{0xAB, c.miso}}
			r.write(0, waiting)
			answer := can.Frame{ID: 0x400, Length: 1, Data: can.Data{7}}
			r.write(1, answer)
			answer.ID += 2
			r.next(1, "controller b's answer while a's chip is missing", frameOf(answer))
			echo := r.pi.Node(0).Peers[0]
			var burst []can.Frame
			for i := range 3 {
				f := can.Frame{ID: 0x300, Length: 1, Data: can.Data{byte(i)}}
				echo.Send(f)
				burst = append(burst, f)
			}
			r.quiet(0, 200*time.Millisecond, "controller a's chip is missing")
			chip := r.pi.Node(0).Chip
			if st, ps := chip.Stats(), echo.Stats(); st.Received+st.Lost != 0 || ps.Sent != 0 || ps.TxErrors == 0 {
				t.Fatalf("while the chip was missing: it received %d frames and lost %d, the echo peer sent %d with %d TX errors; want the chip off the bus: nothing received, nothing acknowledged (TX errors)",
					st.Received, st.Lost, ps.Sent, ps.TxErrors)
			}

			uncertain := r.d.Owner.Ports[0].M.RXOrderUncertain.Load() // before the burst is on the bus
			c.mend(r.pi.Node(0))
			r.waitLog(5*time.Second, "level=INFO", `msg="chip back; bridging again"`, "controller=a")
			if ma.ChipUp.Load() != 1 {
				t.Fatalf("cand_chip_up a %d once the chip answers", ma.ChipUp.Load())
			}
			reply := waiting
			reply.ID++
			r.expectBurst(0, append(burst, reply), uncertain)
			if got := echo.Received(); len(got) != 1 || got[0].Frame != waiting {
				t.Fatalf("the echo peer received %v; want the frame that waited, once", got)
			}
			after := can.Frame{ID: 0x301, Length: 1, Data: can.Data{c.miso}}
			echo.Send(after)
			r.expectNext(0, "a frame received once the chip answers", after)
			r.checkConservation()
		})
	}
}

// MISO shorted to ground while the chip bridges: the chip still hears what cand
// sends. The health check reads 0x00, no chip, and the re-initialisation's RESET
// (what drivers/net/can/spi/mcp251x.c's probe also sends before it reads CANSTAT
// and CANCTRL back) takes the chip to Configuration mode, off the bus: it
// acknowledges no frame it could not deliver, so a peer's frame sent meanwhile
// stays with the peer (retransmitted) and comes once MISO is mended.
func TestMISOShortedAtRunTime(t *testing.T) {
	r := newRigConfig(t).peer(answerPeer("echo", 1)).start()
	m := r.d.Owner.Ports[0].M
	node := r.pi.Node(0)
	echo := node.Peers[0]
	r.write(0, can.Frame{ID: 0x120, Length: 1, Data: can.Data{1}})
	r.expectNext(0, "the answer before the fault", can.Frame{ID: 0x121, Length: 1, Data: can.Data{1}})
	// The short comes while the chip is idle (INT high): the health check finds it
	// (an interrupt served meanwhile: TestMISOShortedDuringAnInterrupt).
	waitfor.Cond(t, 5*time.Second, "the chip idle", func() bool { return node.Chip.RXHeld() == 0 && node.Chip.Level(r.pi.Clock().Reached()) })
	node.Wiring.MISOStuck(0x00)
	r.waitLog(5*time.Second, "level=WARN", `msg="chip lost; re-initialising"`, `cause="mcp2515: no answer on SPI`)
	r.waitLog(5*time.Second, "level=WARN", `msg="chip does not answer; retrying with back-off"`)
	if m.ChipUp.Load() != 0 || m.ChipResets.Load() != 1 {
		t.Fatalf("cand_chip_up %d, cand_chip_resets_total %d with MISO shorted; want 0, 1", m.ChipUp.Load(), m.ChipResets.Load())
	}
	before, txErrs := node.Chip.Stats(), echo.Stats().TxErrors
	held := can.Frame{ID: 0x305, Length: 1, Data: can.Data{5}}
	echo.Send(held)
	waitfor.Cond(t, 5*time.Second, "the echo peer's frame unacknowledged", func() bool { return echo.Stats().TxErrors > txErrs+16 })
	if st, ps := node.Chip.Stats(), echo.Stats(); st.Received != before.Received || st.Lost != before.Lost || ps.Sent != 1 {
		t.Fatalf("with MISO shorted the chip received %d frames and lost %d (before: %d, %d), the peer sent %d; want the chip off the bus: none, and the peer's frame kept",
			st.Received, st.Lost, before.Received, before.Lost, ps.Sent)
	}
	r.quiet(0, 100*time.Millisecond, "MISO is shorted")

	node.Wiring.MISOConnected()
	r.waitLog(5*time.Second, "level=INFO", `msg="chip back; bridging again"`)
	r.expectNext(0, "the peer's frame once MISO is mended", held)
	r.checkConservation()
}

// MISO shorted to ground just before a frame arrives: the interrupt that frame
// raises is served with MISO reading 0x00, and its error pass finds CNF and
// CANINTE 0, as after a chip's own reset. cand names the cause the chip's check
// finds (CANCTRL 0x00, not the reset pattern): no answer on SPI. The frame the
// chip held when cand's RESET took it off the bus cannot be read by anyone: it
// is the test's to count as wiped (docs/faults.md).
func TestMISOShortedDuringAnInterrupt(t *testing.T) {
	r := newRigConfig(t).peer(answerPeer("echo", 1)).start()
	node := r.pi.Node(0)
	echo := node.Peers[0]
	r.write(0, can.Frame{ID: 0x120, Length: 1, Data: can.Data{1}})
	r.expectNext(0, "the answer before the fault", can.Frame{ID: 0x121, Length: 1, Data: can.Data{1}})
	waitfor.Cond(t, 5*time.Second, "the chip idle", func() bool { return node.Chip.RXHeld() == 0 && node.Chip.Level(r.pi.Clock().Reached()) })
	before := node.Chip.Stats()
	node.Wiring.MISOStuck(0x00)
	f := can.Frame{ID: 0x306, Length: 1, Data: can.Data{6}}
	echo.Send(f)
	r.waitLog(5*time.Second, "level=WARN", `msg="chip lost; re-initialising"`, `cause="mcp2515: no answer on SPI`)
	r.waitLog(5*time.Second, "level=WARN", `msg="chip does not answer; retrying with back-off"`)
	wiped := int(node.Chip.Stats().Received - before.Received)
	if wiped > 1 {
		t.Fatalf("the chip received %d frames with MISO shorted; the peer sent one", wiped)
	}
	r.books.mu.Lock()
	r.books.wiped[0] += wiped
	r.books.mu.Unlock()
	node.Wiring.MISOConnected()
	r.waitLog(5*time.Second, "level=INFO", `msg="chip back; bridging again"`)
	if wiped == 0 { // the health check found the short before the frame came
		r.expectNext(0, "the peer's frame once MISO is mended", f)
	}
	r.checkConservation()
}

// expectBurst reads controller i's frames after its chip came back, empty, on a bus
// whose first peer then sent sent back to back: the first two are delivered (they
// find the RX buffers empty), each of the others is delivered or lost in the chip's
// full RX buffers, in bus order, exactly as many lost as the chip counts, and a loss
// is reported by cand's RX-overflow error frame (exactly CAN_ERR_CRTL, RX_OVERFLOW,
// TEC and REC 0): at least one, at most one per lost frame. Bus order but where a
// read found both RX buffers full and their order could not be known (the owner
// looked again more than a frame's time after it emptied RXB0: the MCP2515 keeps no
// order, mcp2515/rxorder.go): each such read may swap its two frames, and is counted
// (cand_rx_order_uncertain_total, counted from uncertainBefore, its value before
// the burst). Nothing else arrives. It
// waits until the peer has sent them all and cand has served the chip (INT high,
// nothing held), then sends a marker frame and reads up to it.
func (r *rig) expectBurst(i int, sent []can.Frame, uncertainBefore uint64) {
	r.t.Helper()
	node := r.pi.Node(i)
	peer := node.Peers[0]
	waitfor.Cond(r.t, 5*time.Second, fmt.Sprintf("the peer's %d frames on the bus", len(sent)), func() bool { return len(sentBy(peer)) >= len(sent) })
	if got := sentBy(peer); !slices.Equal(got, sent) {
		r.t.Fatalf("the peer sent %v, want %v in this order", got, sent)
	}
	waitfor.Cond(r.t, 5*time.Second, "cand to serve the chip (INT high, no frame held)", func() bool {
		return node.Chip.RXHeld() == 0 && node.Chip.Level(r.pi.Clock().Reached())
	})
	lost := int(node.Chip.Stats().Lost)
	marker := can.Frame{ID: 0x7FF, Length: 1, Data: can.Data{0xEE}}
	peer.Send(marker)
	overflow := can.Frame{ID: socketcan.CAN_ERR_FLAG | socketcan.CAN_ERR_CRTL | socketcan.CAN_ERR_CNT, Length: 8,
		Data: can.Data{1: socketcan.CAN_ERR_CRTL_RX_OVERFLOW}}
	var data []can.Frame
	reports := 0
	for {
		f, k, err := r.read(i, 5*time.Second)
		if err != nil {
			r.t.Fatalf("waiting for the marker after %v (%d overflow reports): %v", data, reports, err)
		}
		if k == socketcan.FrameError {
			if f.ID |= socketcan.CAN_ERR_FLAG; f != overflow {
				r.t.Fatalf("error frame %v after %v, want only RX-overflow reports %v", f, data, overflow)
			}
			reports++
			continue
		}
		if f == marker {
			break
		}
		data = append(data, f)
	}
	// The burst's reads of uncertain order: all came before cand served it.
	uncertain := int(r.d.Owner.Ports[i].M.RXOrderUncertain.Load() - uncertainBefore)
	ordered, swaps := unswapped(data, uncertain)
	if len(data)+lost != len(sent) || !subsequence(ordered, sent) || len(data) < 2 || !slices.Contains(data, sent[0]) || !slices.Contains(data, sent[1]) {
		r.t.Fatalf("delivered %v of %v with %d lost in the chip and %d reads of uncertain order (%d swaps undone); want the first two and the rest but the lost, in bus order", data, sent, lost, uncertain, swaps)
	}
	if (lost > 0 && (reports < 1 || reports > lost)) || (lost == 0 && reports != 0) {
		r.t.Fatalf("%d RX-overflow reports for %d frames lost in the chip; want one to %d (none if none lost)", reports, lost, lost)
	}
}

// expectNext checks that the next frame controller i delivers, within 5 s, is want.
func (r *rig) expectNext(i int, what string, want can.Frame) {
	r.t.Helper()
	f, k, err := r.read(i, 5*time.Second)
	if err != nil || k != socketcan.FrameData || f != want {
		r.t.Fatalf("%s: got %v (%v, %v), want %v", what, f, k, err, want)
	}
}

// subsequence reports whether sub is seq with some frames left out, in seq's order.
// unswapped undoes up to n swaps of adjacent frames in data whose counters (the
// first data byte, as expectBurst's frames carry) are out of order, and returns
// the frames and how many swaps it undid.
func unswapped(data []can.Frame, n int) ([]can.Frame, int) {
	out := slices.Clone(data)
	swaps := 0
	for i := 0; i+1 < len(out) && swaps < n; i++ {
		if out[i].ID == out[i+1].ID && out[i].Data[0] > out[i+1].Data[0] {
			out[i], out[i+1] = out[i+1], out[i]
			swaps++
		}
	}
	return out, swaps
}

func subsequence(sub, seq []can.Frame) bool {
	j := 0
	for _, f := range seq {
		if j < len(sub) && sub[j] == f {
			j++
		}
	}
	return j == len(sub)
}

// sentBy is the frames a peer sent, oldest first.
func sentBy(p *canbus.Peer) []can.Frame {
	var out []can.Frame
	for _, rec := range p.Log() {
		if rec.Sent {
			out = append(out, rec.Frame)
		}
	}
	return out
}

// INT held low with no flag set in the chip (a short, a wrong int_gpio): cand
// finds the storm, logs it once (WARN) and counts it, and polls the chip every
// 10 ms instead of spinning: the SPI transfers stay at a few per poll, and the
// frames still come. Released, interrupts are serviced as before (logged).
func TestINTStuckLow(t *testing.T) {
	r := newRigConfig(t).peer(periodicPeer("p", 20*time.Millisecond, 8, 0x100)).start()
	m := r.d.Owner.Ports[0].M
	r.next(0, "a periodic frame", id(0x100))
	w := r.pi.Node(0).Wiring
	w.HoldINTLow(true)
	r.waitLog(5*time.Second, "level=WARN", `msg="INT stuck low with no interrupt flag set (a wiring fault, or int_gpio names the wrong line?): polling the chip every 10ms until the line is released"`)
	if m.IntStorms.Load() != 1 {
		t.Fatalf("cand_int_storms_total %d, want 1", m.IntStorms.Load())
	}
	transfers, since := m.RXSPITransfers.Load(), time.Now()
	for range 10 {
		r.next(0, "a periodic frame while INT is stuck", id(0x100))
	}
	// A poll costs READ STATUS and the error pass, and a READ RX BUFFER and one more
	// READ STATUS when a frame waits: at most 4 transfers each 10 ms, with room for
	// the host's timing.
	polls := int64(time.Since(since)/(10*time.Millisecond)) + 2
	if n := int64(m.RXSPITransfers.Load() - transfers); n > 6*polls {
		t.Fatalf("%d SPI transfers in %v while INT was stuck: the owner spins (at most %d for a poll every 10ms)", n, time.Since(since), 6*polls)
	}
	w.HoldINTLow(false)
	r.waitLog(5*time.Second, "level=INFO", `msg="INT line released: interrupts serviced again"`)
	interrupts := m.Interrupts.Load()
	for range 3 {
		r.next(0, "a periodic frame after INT was released", id(0x100))
	}
	if m.Interrupts.Load() == interrupts {
		t.Fatal("no interrupt serviced after INT was released")
	}
	if n := len(r.log.lines("INT stuck low")); n != 1 || m.IntStorms.Load() != 1 {
		t.Fatalf("the storm was logged %d times and counted %d; want once", n, m.IntStorms.Load())
	}
	r.checkConservation()
}

// SIGTERM during a TX flood: cand stops at once (exit status 0), the frames in the
// TX buffers finish (a healthy bus: none dropped), and the frames still queued in
// the socket are counted (cand_tx_unsent_at_exit_total) and logged with their
// number, also in the exit line.
func TestTXFloodAtExit(t *testing.T) {
	r := newRigConfig(t).bitrate(125_000).peer(periodicPeer("listener", time.Hour, 0, 0x7FF)).start()
	m := r.d.Owner.Ports[0].M
	const n = 3000
	for i := range n {
		r.write(0, can.Frame{ID: 0x100 + uint32(i%0x600), Length: 2, Data: can.Data{byte(i >> 8), byte(i)}})
	}
	r.stop() // what SIGTERM does (cmd/cand's signals)
	if r.err != nil {
		t.Fatalf("Run returned %v on SIGTERM, want nil (exit status 0)", r.err)
	}
	unsent := m.TXUnsentAtExit.Load()
	if unsent == 0 || m.TXDropped.Load() != 0 {
		t.Fatalf("unsent at exit %d, dropped %d; want some left in the queue, none dropped", unsent, m.TXDropped.Load())
	}
	r.waitLog(time.Second, "level=WARN", `msg="frames left unsent in the socket queue at exit"`, fmt.Sprintf("frames=%d", unsent))
	r.waitLog(time.Second, "level=INFO", "msg=stopped", fmt.Sprintf("tx_unsent_at_exit=%d", unsent))
	if got := gathered(t, r.d, "cand_tx_unsent_at_exit_total"); got != float64(unsent) {
		t.Fatalf("cand_tx_unsent_at_exit_total = %v, want %d", got, unsent)
	}
	r.checkConservation()
}

// gathered is a metric's value from the daemon's registry (the controller's only
// series).
func gathered(t *testing.T, d *Daemon, name string) float64 {
	t.Helper()
	mfs, err := d.Metrics.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			if c := mf.GetMetric()[0].GetCounter(); c != nil {
				return c.GetValue()
			}
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// A bus-off storm (every frame destroyed, so each restart ends in bus-off again)
// does not restart the controller every restart_ms: while bus-off repeats within
// 10 s of the last restart the delay doubles (logged each time), and every restart
// is counted. Once the bus is healthy again, frames go through.
func TestBusOffStormRateLimited(t *testing.T) {
	r := newRigConfig(t).restartMs(20).peer(answerPeer("echo", 1)).start()
	m := r.d.Owner.Ports[0].M
	bus := r.pi.Node(0).Bus
	bus.InjectErrors(r.pi.Clock().Reach(), 1<<30)
	for i := range 40 {
		r.write(0, can.Frame{ID: 0x123, Length: 1, Data: can.Data{byte(i)}})
	}
	want := []string{"40ms", "80ms", "160ms", "320ms", "640ms"}
	r.waitLog(10*time.Second, `msg="bus-off again soon after the last restart: restart delayed"`, "delay=640ms")
	var got []string
	for _, line := range r.log.lines(`msg="bus-off again soon after the last restart: restart delayed"`) {
		_, d, _ := strings.Cut(line, "delay=")
		got = append(got, strings.Fields(d)[0])
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("restart delays %v, want %v", got, want)
	}
	// Six bus-offs so far, five restarts; without the limit there would be one
	// every ~23 ms (restart_ms plus the 32 failed attempts to bus-off).
	if b, rs := m.BusOffs.Load(), m.Restarts.Load(); b < 6 || b > 7 || rs < 5 || rs > b {
		t.Fatalf("%d bus-offs and %d restarts; want 6 or 7 bus-offs, one restart fewer or as many", b, rs)
	}
	bus.InjectErrors(r.pi.Clock().Reach(), 0)
	f := r.next(0, "an answer once the bus is healthy", func(f can.Frame) bool { return f.ID == 0x124 })
	if f.Length != 1 {
		t.Fatalf("answer %v", f)
	}
	r.checkConservation()
}
