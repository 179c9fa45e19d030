package bcm2835

import (
	"math"
	"math/bits"
)

// SPI0 clock (BCM2835 ARM Peripherals §10.5 CLK): SCLK = core clock / CDIV. The
// silicon takes any even divider (the datasheet's "power of 2" is wrong; odd values
// are rounded down) and reads 0 as 65536. The core clock is not a constant: the
// firmware scales it (Pi 3: 250–400 MHz, Pi 4: 200–500 MHz) unless pinned, so size
// the divider for the highest core clock and expect SCLK to drop when it idles
// (reference bcm283x-userspace-access.md §0.2, §1 "Clock divider").

// MaxCDIV is the largest divider; CLK.CDIV = 0 selects it.
const MaxCDIV = 65536

// PolledClocksPerByte is the SCLK periods SPI0 spends per byte outside DMA mode:
// 8 data clocks and one idle clock (kernel spi-bcm2835).
const PolledClocksPerByte = 9

// Divider returns the CLK.CDIV value for the fastest SCLK not above wantHz at core
// clock coreHz, and that SCLK: the divider is rounded up, then up to even, at least
// 2; dividers of 65536 or more are returned as 0 (= 65536, the slowest). wantHz 0
// asks for the slowest clock.
func Divider(coreHz, wantHz uint32) (cdiv uint32, sclkHz uint32) {
	d := uint64(MaxCDIV)
	if wantHz > 0 {
		d = (uint64(coreHz) + uint64(wantHz) - 1) / uint64(wantHz)
	}
	d += d & 1
	if d < 2 {
		d = 2
	}
	if d >= MaxCDIV {
		return 0, coreHz / MaxCDIV
	}
	return uint32(d), coreHz / uint32(d)
}

// EffectiveDivider is the divider the silicon applies for a CLK register value:
// CDIV[15:0] with odd values rounded down, 0 meaning 65536. (A written 1 rounds down
// to 0 and so to 65536; Divider never produces it.)
func EffectiveDivider(clk uint32) uint32 {
	d := clk & CLKCDIV &^ 1
	if d == 0 {
		return MaxCDIV
	}
	return d
}

// SCLK is the SPI clock for CLK value clk at core clock coreHz.
func SCLK(coreHz, clk uint32) uint32 { return coreHz / EffectiveDivider(clk) }

// SCLKRange is the SCLK a divider gives over the core clock range
// minCoreHz..maxCoreHz: the range a transfer may actually run at when the firmware
// scales the core clock.
func SCLKRange(minCoreHz, maxCoreHz, clk uint32) (lo, hi uint32) {
	return SCLK(minCoreHz, clk), SCLK(maxCoreHz, clk)
}

// WireNs is the wire time in nanoseconds of n bytes sent back to back in polled
// mode (9 SCLK periods per byte) with CLK value clk at core clock coreHz, rounded up.
func WireNs(coreHz, clk uint32, n int) int64 {
	if coreHz == 0 || n <= 0 {
		return 0
	}
	perByte := PolledClocksPerByte * uint64(EffectiveDivider(clk)) * 1e9 // < 2^50
	hi, lo := bits.Mul64(uint64(n), perByte)
	lo, carry := bits.Add64(lo, uint64(coreHz)-1, 0)
	hi += carry
	if hi >= uint64(coreHz) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(coreHz))
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}
