// Package bcm2835 owns the Raspberry Pi's SPI0, GPIO and System Timer register
// blocks (BCM2835/2836/2837/2711): detection, mapping, the polling-first SPI
// engine, GPIO pin access and the System Timer's counter. The register maps here
// are declared once and used both by the driver and by the simulator's register
// models (sim/soc).
//
// References: BCM2835 ARM Peripherals §6 (GPIO), §10 (SPI) and §12 (System
// Timer), BCM2711 ARM Peripherals, and the kernel's drivers/spi/spi-bcm2835.c.
package bcm2835

// Regs is one memory-mapped 32-bit register block. Offsets are byte offsets from the
// block's base. Implementations: MMIO (real registers through mmap) and the
// simulator's register models. Neither takes a lock, allocates or makes a syscall.
type Regs interface {
	Load(off uint32) uint32
	Store(off uint32, v uint32)
}

// Peripheral block offsets from the peripheral base (ARM physical address).
const (
	GPIOOffset = 0x200000 // bus address 0x7E200000
	SPI0Offset = 0x204000 // bus address 0x7E204000
	BlockSize  = 0x1000   // one page covers each block
)

// Known peripheral bases (ARM physical), from /proc/device-tree/soc/ranges.
const (
	PeriBaseBCM2835 = 0x20000000 // Pi 1, Zero
	PeriBaseBCM2836 = 0x3F000000 // Pi 2, 3, Zero 2 (BCM2836/2837)
	PeriBaseBCM2711 = 0xFE000000 // Pi 4, 400, CM4 (low-peripheral mode)
	BusBase         = 0x7E000000 // first cell of soc/ranges
)

// SPI0 registers (BCM2835 ARM Peripherals §10.5).
const (
	SPICS   = 0x00 // CS: control and status
	SPIFIFO = 0x04 // FIFO: TX on write, RX on read (8 bits per access when DMAEN=0)
	SPICLK  = 0x08 // CLK: CDIV[15:0]; SCLK = core clock / CDIV, even, 0 = 65536
	SPIDLEN = 0x0C // DLEN: data length, DMA mode only
	SPILTOH = 0x10 // LTOH: LoSSI output hold
	SPIDC   = 0x14 // DC: DMA DREQ/panic thresholds

	SPIFIFOSize = 64 // bytes in each of the TX and RX FIFOs
)

// SPI0 CS register fields.
const (
	CSLENLONG  = 1 << 25
	CSDMALEN   = 1 << 24
	CSCSPOL2   = 1 << 23
	CSCSPOL1   = 1 << 22
	CSCSPOL0   = 1 << 21
	CSRXF      = 1 << 20 // RX FIFO full
	CSRXR      = 1 << 19 // RX FIFO needs reading (≥ 3/4 full)
	CSTXD      = 1 << 18 // TX FIFO can accept data
	CSRXD      = 1 << 17 // RX FIFO contains data
	CSDONE     = 1 << 16 // transfer done (write 1 at the end of every transfer: quirk)
	CSLEN      = 1 << 13 // LoSSI enable
	CSREN      = 1 << 12 // read enable (3-wire)
	CSADCS     = 1 << 11 // automatically deassert chip select
	CSINTR     = 1 << 10 // interrupt on RXR
	CSINTD     = 1 << 9  // interrupt on DONE
	CSDMAEN    = 1 << 8
	CSTA       = 1 << 7 // transfer active: asserts the selected CE
	CSCSPOL    = 1 << 6 // chip select polarity (all CEs)
	CSCLEARRX  = 1 << 5
	CSCLEARTX  = 1 << 4
	CSCPOL     = 1 << 3
	CSCPHA     = 1 << 2
	CSCSMask   = 0x3 // CS[1:0]: 0 = CE0, 1 = CE1, 2 = CE2, 3 = none
	CSCSNone   = 0x3
	CSCSPOLnSh = 21 // CSPOLn = 1 << (CSCSPOLnSh + n)
)

// GPIO registers (BCM2835 ARM Peripherals §6.1; BCM2711 adds the pull registers).
const (
	GPFSEL0   = 0x00 // function select, 3 bits per pin, 10 pins per register
	GPSET0    = 0x1C // output set
	GPSET1    = 0x20
	GPCLR0    = 0x28 // output clear
	GPCLR1    = 0x2C
	GPLEV0    = 0x34 // pin level
	GPLEV1    = 0x38
	GPEDS0    = 0x40 // event detect status (owned by the kernel for cdev lines)
	GPREN0    = 0x4C
	GPFEN0    = 0x58
	GPHEN0    = 0x64
	GPLEN0    = 0x70
	GPAREN0   = 0x7C
	GPAFEN0   = 0x88
	GPPUD     = 0x94 // BCM2835-2837 pull control: 0 off, 1 down, 2 up
	GPPUDCLK0 = 0x98
	GPPUDCLK1 = 0x9C
	// GPIOPUPPDN0..3: BCM2711 pull registers, 2 bits per pin, 16 pins per register:
	// 00 none, 01 up, 10 down (not the GPPUD encoding).
	GPIOPUPPDN0 = 0xE4
)

// Function select values (3 bits).
const (
	FselInput  = 0b000
	FselOutput = 0b001
	FselAlt0   = 0b100
	FselAlt1   = 0b101
	FselAlt2   = 0b110
	FselAlt3   = 0b111
	FselAlt4   = 0b011
	FselAlt5   = 0b010
)
