// Package kernelref drives an MCP2515 the way the Linux kernel's mcp251x driver
// (drivers/net/can/spi/mcp251x.c) does, on the virtual Pi's chip model through the
// same BCM2835 SPI engine (hw/bcm2835 on sim/soc) as cand, so that `cand bench`
// can show both drivers on the same workload.
//
// The SPI sequence is the driver's (ist.go, tx.go, init.go, each function named
// after the kernel's): its bytes are real, shifted through the register model and
// answered by the chip model. What a kernel costs beyond the wire — the interrupt
// and the wake-up of its threads, and the work around every spi_sync — is not
// measured here but charged from a published measurement of the kernel's SPI path
// on a Raspberry Pi 2 (Costs, Pi2), scaled to a Pi 3 (ForBoard): calibrated, not
// measured. The reference's board time is those charges and the SPI wire's time
// only; nothing of the host's running of its code is charged (boardCPU).
// docs/kernel-reference.md states the figures, their source and how they are
// charged.
//
// Files: costs.go (the charges), cpu.go (the reference's CPU on the board's
// clock), ist.go (mcp251x_can_ist and mcp251x_hw_rx), tx.go
// (mcp251x_hard_start_xmit, mcp251x_tx_work_handler, mcp251x_hw_tx), init.go
// (mcp251x_hw_reset, mcp251x_setup, mcp251x_set_normal_mode), driver.go (the loop
// on the virtual Pi: the interrupt line, the threads' wake-ups, the socket).
package kernelref
