package kernelref

import "time"

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
