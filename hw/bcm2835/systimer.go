package bcm2835

// System Timer (BCM2835 ARM Peripherals §12 "System Timer"; the same block in
// the BCM2711 ARM Peripherals): a free-running 64-bit counter that counts at
// 1 MHz from power-on (CLO/CHI), and four 32-bit compare channels that raise
// CS.Mn when CLO equals Cn. The GPU firmware uses channels 0 and 2, and the
// kernel's bcm2835_timer driver channel 3 for its clock events
// (drivers/clocksource/bcm2835_timer.c, DEFAULT_TIMER 3): cand only reads CLO
// and CHI, and never writes the block.

// SystemTimerOffset is the block's offset from the peripheral base (bus address
// 0x7E003000).
const SystemTimerOffset = 0x3000

// SystemTimerHz is the rate CLO/CHI count at (the device tree's
// clock-frequency = <1000000> of brcm,bcm2835-system-timer).
const SystemTimerHz = 1_000_000

// SystemTimer reads the System Timer's counter on a register block (MMIO on a
// real Pi, the simulator's model on the virtual one).
type SystemTimer struct {
	r Regs[STReg]
}

// NewSystemTimer reads the counter through r, the System Timer block.
func NewSystemTimer(r Regs[STReg]) *SystemTimer { return &SystemTimer{r: r} }

// Count is the 64-bit counter, in µs since the SoC started counting. The two
// halves are separate registers, so CLO may wrap between their reads (every
// 2^32 µs, 71.6 minutes): Count reads CHI, CLO and CHI again. If CHI moved,
// CLO was read just before or just after the wrap, and its top bit says which:
// a CLO near 2^32 belongs with the first CHI, a CLO near 0 with the second.
// Three register loads; no lock, no allocation, no system call.
func (t *SystemTimer) Count() uint64 {
	hi := t.r.Load(STCHI)
	lo := t.r.Load(STCLO)
	if hi2 := t.r.Load(STCHI); hi2 != hi && lo < 1<<31 {
		hi = hi2
	}
	return uint64(hi)<<32 | uint64(lo)
}
