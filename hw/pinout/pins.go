// Package pinout holds the Raspberry Pi SoC's pin facts that both the
// configuration and the hardware layer need: SPI0's pins, the number of GPIOs, and
// the chip-select setting that names a pin. It imports nothing of cand.
package pinout

import "fmt"

// SPI0 pins, in ALT0 (BCM2835 ARM Peripherals §6.2, alternative function
// assignments).
const (
	PinCE1  = 7
	PinCE0  = 8
	PinMISO = 9
	PinMOSI = 10
	PinSCLK = 11
)

// Number of GPIOs: BCM2835/2836/2837 have 54 (BCM2835 ARM Peripherals §6.1),
// BCM2711 has 58 (BCM2711 ARM Peripherals §5.1).
const (
	NumGPIOBCM2835 = 54
	NumGPIOBCM2711 = 58
)

// MaxGPIO is the highest BCM GPIO every supported SoC has.
const MaxGPIO = NumGPIOBCM2835 - 1

// IsSPI0DataPin reports whether GPIO n is SPI0's MISO, MOSI or SCLK, pins that are
// nothing else while SPI0 runs.
func IsSPI0DataPin(n int) bool { return n == PinMISO || n == PinMOSI || n == PinSCLK }

// SPI0DataPins names the data pins for messages: "MISO 9, MOSI 10, SCLK 11".
func SPI0DataPins() string {
	return fmt.Sprintf("MISO %d, MOSI %d, SCLK %d", PinMISO, PinMOSI, PinSCLK)
}
