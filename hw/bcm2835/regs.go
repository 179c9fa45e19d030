// Package bcm2835 owns the Raspberry Pi's SPI0, GPIO and System Timer register
// blocks (BCM2835/2836/2837/2711): detection, mapping, the polling-first SPI
// engine, GPIO pin access and the System Timer's counter. The register maps here
// are declared once and used both by the driver and by the simulator's register
// models (sim/soc).
//
// References: BCM2835 ARM Peripherals §6 (GPIO), §10 (SPI) and §12 (System
// Timer), BCM2711 ARM Peripherals, and the kernel's drivers/spi/spi-bcm2835.c.
package bcm2835

// SPIReg, GPIOReg and STReg are the byte offsets of the SPI0, GPIO and System
// Timer registers from their block's base: distinct types, so that a register of
// one block cannot address another block.
type (
	SPIReg  uint32
	GPIOReg uint32
	STReg   uint32
)

// Offset is a register offset of any block.
type Offset interface{ SPIReg | GPIOReg | STReg }

// Regs is one memory-mapped 32-bit register block, addressed by its own kind of
// offset: Regs[SPIReg] is SPI0, Regs[GPIOReg] GPIO, Regs[STReg] the System Timer.
// Implementations: MMIO (real registers through mmap) and the simulator's
// register models. Neither takes a lock, allocates or makes a syscall.
type Regs[O Offset] interface {
	Load(off O) uint32
	Store(off O, v uint32)
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
	SPICS   SPIReg = 0x00 // CS: control and status
	SPIFIFO SPIReg = 0x04 // FIFO: TX on write, RX on read (8 bits per access when DMAEN=0)
	SPICLK  SPIReg = 0x08 // CLK: CDIV[15:0]; SCLK = core clock / CDIV, even, 0 = 65536
	SPIDLEN SPIReg = 0x0C // DLEN: data length, DMA mode only
	SPILTOH SPIReg = 0x10 // LTOH: LoSSI output hold
	SPIDC   SPIReg = 0x14 // DC: DMA DREQ/panic thresholds
)

// SPIFIFOSize is the bytes in each of SPI0's TX and RX FIFOs.
const SPIFIFOSize = 64

// SPI0 CLK register field: CDIV[15:0], the clock divider (even; 0 = 65536).
const CLKCDIV = 0xFFFF

// CS is a value of SPI0's CS register: its fields, or a mask of some of them.
type CS uint32

// SPI0 CS register fields.
const (
	CSLENLONG  CS = 1 << 25
	CSDMALEN   CS = 1 << 24
	CSCSPOL2   CS = 1 << 23
	CSCSPOL1   CS = 1 << 22
	CSCSPOL0   CS = 1 << 21
	CSRXF      CS = 1 << 20 // RX FIFO full
	CSRXR      CS = 1 << 19 // RX FIFO needs reading (≥ 3/4 full)
	CSTXD      CS = 1 << 18 // TX FIFO can accept data
	CSRXD      CS = 1 << 17 // RX FIFO contains data
	CSDONE     CS = 1 << 16 // transfer done (write 1 at the end of every transfer: quirk)
	CSLEN      CS = 1 << 13 // LoSSI enable
	CSREN      CS = 1 << 12 // read enable (3-wire)
	CSADCS     CS = 1 << 11 // automatically deassert chip select
	CSINTR     CS = 1 << 10 // interrupt on RXR
	CSINTD     CS = 1 << 9  // interrupt on DONE
	CSDMAEN    CS = 1 << 8
	CSTA       CS = 1 << 7 // transfer active: asserts the selected CE
	CSCSPOL    CS = 1 << 6 // chip select polarity (all CEs)
	CSCLEARRX  CS = 1 << 5
	CSCLEARTX  CS = 1 << 4
	CSCPOL     CS = 1 << 3
	CSCPHA     CS = 1 << 2
	CSCSMask   CS = 0x3 // CS[1:0]: 0 = CE0, 1 = CE1, 2 = CE2, 3 = none
	CSCSNone   CS = 0x3
	CSCSPOLnSh    = 21 // CSPOLn = 1 << (CSCSPOLnSh + n)
)

// CSCSPOLn is the CS register's chip select polarity bit of CE n (0..2).
func CSCSPOLn(n int) CS { return 1 << (CSCSPOLnSh + n) }

// CSCS is the CS register's chip select field selecting CE n (0..2).
func CSCS(n int) CS { return CS(n) & CSCSMask }

// LoadCS reads SPI0's CS register.
func LoadCS(r Regs[SPIReg]) CS { return CS(r.Load(SPICS)) }

// StoreCS writes SPI0's CS register.
func StoreCS(r Regs[SPIReg], v CS) { r.Store(SPICS, uint32(v)) }

// GPIO registers (BCM2835 ARM Peripherals §6.1; BCM2711 adds the pull registers).
const (
	GPFSEL0   GPIOReg = 0x00 // function select, 3 bits per pin, 10 pins per register
	GPSET0    GPIOReg = 0x1C // output set
	GPSET1    GPIOReg = 0x20
	GPCLR0    GPIOReg = 0x28 // output clear
	GPCLR1    GPIOReg = 0x2C
	GPLEV0    GPIOReg = 0x34 // pin level
	GPLEV1    GPIOReg = 0x38
	GPEDS0    GPIOReg = 0x40 // event detect status (owned by the kernel for cdev lines)
	GPREN0    GPIOReg = 0x4C
	GPFEN0    GPIOReg = 0x58
	GPHEN0    GPIOReg = 0x64
	GPLEN0    GPIOReg = 0x70
	GPAREN0   GPIOReg = 0x7C
	GPAFEN0   GPIOReg = 0x88
	GPPUD     GPIOReg = 0x94 // BCM2835-2837 pull control: 0 off, 1 down, 2 up
	GPPUDCLK0 GPIOReg = 0x98
	GPPUDCLK1 GPIOReg = 0x9C
	// GPIOPUPPDN0..3: BCM2711 pull registers, 2 bits per pin, 16 pins per register:
	// 00 none, 01 up, 10 down (not the GPPUD encoding).
	GPIOPUPPDN0 GPIOReg = 0xE4
)

// GPIO banks: pins 0..31 are bank 0, 32..57 bank 1; a bank's registers (GPSETn,
// GPCLRn, GPLEVn, GPPUDCLKn) are 4 bytes apart. The pin is masked into the two
// banks, so that no pin number reaches another register.
func gpioBank(pin int) GPIOReg { return GPIOReg(pin>>5&1) << 2 }

// PinBit is pin's bit in its bank's registers.
func PinBit(pin int) uint32 { return 1 << uint32(pin&31) }

// GPSETn is the output set register of pin's bank.
func GPSETn(pin int) GPIOReg { return GPSET0 + gpioBank(pin) }

// GPCLRn is the output clear register of pin's bank.
func GPCLRn(pin int) GPIOReg { return GPCLR0 + gpioBank(pin) }

// GPLEVn is the level register of pin's bank.
func GPLEVn(pin int) GPIOReg { return GPLEV0 + gpioBank(pin) }

// GPPUDCLKn is the BCM2835-2837 pull clock register of pin's bank.
func GPPUDCLKn(pin int) GPIOReg { return GPPUDCLK0 + gpioBank(pin) }

// GPFSELn is the function select register of pin (10 pins a register).
func GPFSELn(pin int) GPIOReg { return GPFSEL0 + GPIOReg(pin/10)*4 }

// FselShift is the place of pin's 3-bit field in GPFSELn(pin).
func FselShift(pin int) uint32 { return uint32(pin%10) * 3 }

// GPIOPUPPDNn is the BCM2711 pull register of pin (16 pins a register).
func GPIOPUPPDNn(pin int) GPIOReg { return GPIOPUPPDN0 + GPIOReg(pin/16)*4 }

// PupPdnShift is the place of pin's 2-bit field in GPIOPUPPDNn(pin).
func PupPdnShift(pin int) uint32 { return uint32(pin%16) * 2 }

// FselMask and PupPdnMask are one pin's function select and BCM2711 pull fields.
const (
	FselMask   = 0b111
	PupPdnMask = 0b11
)

// Fsel is a pin's function select value (GPFSELn).
type Fsel uint32

// Function select values (3 bits).
const (
	FselInput  Fsel = 0b000
	FselOutput Fsel = 0b001
	FselAlt0   Fsel = 0b100
	FselAlt1   Fsel = 0b101
	FselAlt2   Fsel = 0b110
	FselAlt3   Fsel = 0b111
	FselAlt4   Fsel = 0b011
	FselAlt5   Fsel = 0b010
)

// System Timer registers (BCM2835 ARM Peripherals §12.1).
const (
	STCS  STReg = 0x00 // CS: match flags M0..M3, write 1 to clear
	STCLO STReg = 0x04 // CLO: counter bits 0..31, read-only
	STCHI STReg = 0x08 // CHI: counter bits 32..63, read-only
	STC0  STReg = 0x0C // C0..C3: compare values, one per channel
	STC1  STReg = 0x10
	STC2  STReg = 0x14
	STC3  STReg = 0x18
)

// System Timer CS register fields: Mn is set when CLO matched Cn.
const (
	STCSM0 = 1 << 0
	STCSM1 = 1 << 1
	STCSM2 = 1 << 2
	STCSM3 = 1 << 3
)
