package bcm2835

import "cand/hw/pinout"

// SoC names the Broadcom chip whose peripherals are mapped. The SPI0 block is the
// same on all of them; the GPIO block differs in pin count and in how pulls are set:
// BCM2835/2836/2837 use the GPPUD + GPPUDCLK sequence (write-only), BCM2711 has the
// GPIO_PUP_PDN_CNTRL registers (readable, opposite encoding).
type SoC uint8

const (
	SoCUnknown SoC = iota
	SoCBCM2835     // Pi 1, Zero
	SoCBCM2836     // Pi 2
	SoCBCM2837     // Pi 3, Zero 2
	SoCBCM2711     // Pi 4, 400, CM4
)

var socNames = [...]string{"unknown", "BCM2835", "BCM2836", "BCM2837", "BCM2711"}

func (s SoC) String() string {
	if int(s) < len(socNames) {
		return socNames[s]
	}
	return "unknown"
}

// PullRegisters reports whether the SoC has the BCM2711 GPIO_PUP_PDN_CNTRL pull
// registers (true) or the older GPPUD/GPPUDCLK sequence (false).
func (s SoC) PullRegisters() bool { return s == SoCBCM2711 }

// NumGPIO is the number of GPIO lines in the SoC's GPIO block (54, or 58 on BCM2711).
func (s SoC) NumGPIO() int {
	if s == SoCBCM2711 {
		return pinout.NumGPIOBCM2711
	}
	return pinout.NumGPIOBCM2835
}

// ArchTimer reports whether the SoC's ARM cores have the ARM Generic Timer, the
// counter the kernel's vDSO reads CLOCK_MONOTONIC from without a system call:
// the Cortex-A7 (BCM2836), Cortex-A53 (BCM2837) and Cortex-A72 (BCM2711) have it
// (each core's Technical Reference Manual, "Generic Timer"); the BCM2835's
// ARM1176JZF-S, an ARMv6 core, has not, and an ARMv6 kernel has no vDSO at all
// (arch/arm/mm/Kconfig: VDSO depends on CPU_V7).
func (s SoC) ArchTimer() bool {
	switch s {
	case SoCBCM2836, SoCBCM2837, SoCBCM2711:
		return true
	}
	return false
}
