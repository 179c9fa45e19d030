package kernelref

import (
	"fmt"
	"math"
	"time"

	"cand/config"
	"cand/sim"
)

// Costs are what the kernel spends outside the SPI wire, charged on the virtual
// Pi's clock.
type Costs struct {
	// IRQ is INT going low → the hard interrupt handler running.
	IRQ time.Duration
	// ThreadWake is a kernel thread woken → running: the threaded interrupt
	// handler (mcp251x_can_ist) after the hard handler, and the workqueue worker
	// (mcp251x_tx_work_handler) after ndo_start_xmit queued it.
	ThreadWake time.Duration
	// SyncSetup is spi_sync called → CS down.
	SyncSetup time.Duration
	// InCS is the time CS is down beyond the bytes' wire time.
	InCS time.Duration
	// SyncReturn is CS up → spi_sync returned to the driver.
	SyncReturn time.Duration
}

// Source is the measurement Pi2 is taken from.
const Source = "https://github.com/msperl/spi-bcm2835/wiki/spi_bcm2835situation"

// Pi2 are the kernel's costs on a Raspberry Pi 2 with spi-bcm2835 prefilling the
// FIFO and polling short transfers (Source, "Improved startup code prefilling FIFO
// and polling for 10us"): "time between CAN-interrupt down and inside CAN
// interrupt handler: 12.68us"; "time between first SPI message scheduled and the
// transmit_one running: 31.16us" (a kernel thread woken); "time from
// transmit_one-start to CS-down: 4.6us"; "time from CS-down to CS-up: 7.2us" for
// 2 bytes that take "1.76us" on the wire (so 5.44 µs of it is overhead); "time
// from CS-up woken to mcp-completion code called: 4.68us".
var Pi2 = Costs{
	IRQ:        12680 * time.Nanosecond,
	ThreadWake: 31160 * time.Nanosecond,
	SyncSetup:  4600 * time.Nanosecond,
	InCS:       (7200 - 1760) * time.Nanosecond,
	SyncReturn: 4680 * time.Nanosecond,
}

// PerTransfer is one spi_sync's cost beyond its bytes' wire time.
func (c Costs) PerTransfer() time.Duration { return c.SyncSetup + c.InCS + c.SyncReturn }

// Interrupt is what handling one interrupt costs that makes transfers SPI
// transfers of bytes in all, at byteTime a byte: the wake-up, then per transfer
// its overhead and wire time.
func (c Costs) Interrupt(transfers, bytes int, byteTime time.Duration) time.Duration {
	return c.IRQ + c.ThreadWake + time.Duration(transfers)*c.PerTransfer() + time.Duration(bytes)*byteTime
}

// Scaled is c with every charge multiplied by num/den (rounded to the
// nanosecond).
func (c Costs) Scaled(num, den float64) Costs {
	s := func(d time.Duration) time.Duration { return time.Duration(math.Round(float64(d) * num / den)) }
	return Costs{IRQ: s(c.IRQ), ThreadWake: s(c.ThreadWake), SyncSetup: s(c.SyncSetup), InCS: s(c.InCS), SyncReturn: s(c.SyncReturn)}
}

// ForBoard are the kernel's costs on board b: Pi2 on the Pi 2 they were measured
// on; on a Pi 3, Pi2 scaled by the two cores' time for the same work as the
// virtual Pi's profiles state it (sim/board.go: cycles per anchor cycle over the
// highest ARM clock; the Pi 3's Cortex-A53 at 1.2 GHz does in 0.619 of the time
// what the Pi 2's Cortex-A7 does at 900 MHz). Every charge is CPU work in the
// kernel (the interrupt's entry and demultiplexing, the scheduler's wake-up and
// context switch, spi-bcm2835's code around the transfer), so each scales by
// that ratio; the SPI wire's time is the SCLK's and does not. The wake-ups are
// scaled the same way for want of a like-for-like published figure for the two
// boards (docs/kernel-reference.md). Other boards have no costs: an error.
func ForBoard(b config.SimBoard) (Costs, error) {
	switch b {
	case config.SimBoardPi2:
		return Pi2, nil
	case config.SimBoardPi3:
		p2, err := sim.ProfileOf(config.SimBoardPi2)
		if err != nil {
			return Costs{}, err
		}
		p3, err := sim.ProfileOf(config.SimBoardPi3)
		if err != nil {
			return Costs{}, err
		}
		return Pi2.Scaled(p3.PerClock/float64(p3.ARMMaxHz), p2.PerClock/float64(p2.ARMMaxHz)), nil
	}
	return Costs{}, fmt.Errorf("kernelref: no kernel costs for board %s: the reference has the Pi 2's measured costs and their scaling to a Pi 3; use sim_board pi2 or pi3", b)
}
