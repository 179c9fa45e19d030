package bcm2835

import (
	"fmt"
	"slices"
	"testing"
)

// memRegs is a register block in plain memory that logs every store. It models
// nothing: GPSET/GPCLR do not change GPLEV, GPPUD does not reach a pin.
type memRegs struct {
	w   [1024]uint32
	log []string
}

func (m *memRegs) Load(off GPIOReg) uint32 { return m.w[off/4] }
func (m *memRegs) Store(off GPIOReg, v uint32) {
	m.w[off/4] = v
	m.log = append(m.log, fmt.Sprintf("%#02x=%#x", off, v))
}

// fsel builds GPFSEL word values: pins (mod 10) → function.
func fsel(fs map[int]Fsel) uint32 {
	var v uint32
	for p, f := range fs {
		v |= uint32(f) << (uint32(p%10) * 3)
	}
	return v
}

func noEdgeRegisters(t *testing.T, log []string) {
	t.Helper()
	for _, e := range log {
		var off GPIOReg
		var v uint32
		fmt.Sscanf(e, "%x=%x", &off, &v)
		if off >= GPEDS0 && off <= GPAFEN0+4 {
			t.Errorf("store to edge-detect register: %s", e)
		}
	}
}

// A PiCAN2 on a Pi 3: CE0 native, INT on GPIO25. GPIO8 was left a GPIO output
// (high) by the kernel's spi-bcm2835, GPIO7 is ALT0 from a previous user, the
// rest inputs; GPIO2/3 are I2C (ALT0) and must not move.
func TestSetupPinsPiCAN2(t *testing.T) {
	r := &memRegs{}
	g := NewGPIO(r, SoCBCM2837)
	fsel0 := fsel(map[int]Fsel{2: FselAlt0, 3: FselAlt0, 7: FselAlt0, 8: FselOutput})
	r.w[GPFSEL0/4] = fsel0
	r.w[(GPFSEL0+8)/4] = fsel(map[int]Fsel{24: FselOutput})
	r.w[GPLEV0/4] = 1 << 8

	s, err := SetupPins(g, PinPlan{ChipSelects: []ChipSelect{{Native: 0}}, Interrupts: []int{25}})
	if err != nil {
		t.Fatal(err)
	}
	wantFsel0 := fsel(map[int]Fsel{2: FselAlt0, 3: FselAlt0, 7: FselAlt0, 8: FselAlt0, 9: FselAlt0})
	wantFsel1 := fsel(map[int]Fsel{10: FselAlt0, 11: FselAlt0})
	wantFsel2 := fsel(map[int]Fsel{24: FselOutput, 25: FselInput})
	if got := [3]uint32{r.w[0], r.w[1], r.w[2]}; got != [3]uint32{wantFsel0, wantFsel1, wantFsel2} {
		t.Fatalf("GPFSEL0..2 = %#x, want %#x", got, [3]uint32{wantFsel0, wantFsel1, wantFsel2})
	}
	wantLog := []string{
		// CE0 (GPIO8) to ALT0, then MISO, MOSI, SCLK
		fmt.Sprintf("0x00=%#x", fsel(map[int]Fsel{2: FselAlt0, 3: FselAlt0, 7: FselAlt0, 8: FselAlt0})),
		fmt.Sprintf("0x00=%#x", wantFsel0),
		fmt.Sprintf("0x04=%#x", fsel(map[int]Fsel{10: FselAlt0})),
		fmt.Sprintf("0x04=%#x", wantFsel1),
		// INT: input, then the GPPUD pull-up sequence on GPIO25
		fmt.Sprintf("0x08=%#x", wantFsel2),
		"0x94=0x2", "0x98=0x2000000", "0x94=0x0", "0x98=0x0",
	}
	if !slices.Equal(r.log, wantLog) {
		t.Fatalf("stores\n%q\nwant\n%q", r.log, wantLog)
	}
	noEdgeRegisters(t, r.log)
	if got := s.Pins(); !slices.Equal(got, []int{8, 9, 10, 11, 25}) {
		t.Errorf("Pins = %v", got)
	}

	r.log = nil
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if got := [3]uint32{r.w[0], r.w[1], r.w[2]}; got != [3]uint32{fsel0, 0, wantFsel2} {
		t.Errorf("after Restore GPFSEL0..2 = %#x, want %#x", got, [3]uint32{fsel0, 0, wantFsel2})
	}
	wantRestore := []string{
		fmt.Sprintf("0x08=%#x", wantFsel2), // GPIO25 was an input: same word again
		fmt.Sprintf("0x04=%#x", fsel(map[int]Fsel{10: FselAlt0})),
		"0x04=0x0",
		fmt.Sprintf("0x00=%#x", fsel(map[int]Fsel{2: FselAlt0, 3: FselAlt0, 7: FselAlt0, 8: FselAlt0})),
		"0x1c=0x100", // GPIO8 was an output, high: latch it before it becomes one again
		fmt.Sprintf("0x00=%#x", fsel0),
	}
	if !slices.Equal(r.log, wantRestore) {
		t.Fatalf("restore stores\n%q\nwant\n%q", r.log, wantRestore)
	}
	r.log = nil
	if err := s.Restore(); err != nil || len(r.log) != 0 {
		t.Errorf("second Restore: %v, stores %q", err, r.log)
	}
}

// A dual-controller HAT on a Pi 4 with one device on CE1 and one on an
// active-high GPIO chip select (GPIO5), interrupts on GPIO23 and GPIO25, and a
// logic-analyzer output on GPIO17.
func TestSetupPinsBCM2711GPIOChipSelect(t *testing.T) {
	r := &memRegs{}
	g := NewGPIO(r, SoCBCM2711)
	// Pulls at reset-like values: GPIO23 pull-down, GPIO25 pull-down (10), GPIO5 up (01).
	pup0 := uint32(0b01) << (5 * 2)
	pup1 := uint32(0b10)<<((23-16)*2) | uint32(0b10)<<((25-16)*2)
	r.w[GPIOPUPPDN0/4] = pup0
	r.w[GPIOPUPPDN0/4+1] = pup1

	s, err := SetupPins(g, PinPlan{
		ChipSelects: []ChipSelect{{Native: 1}, {Native: -1, GPIO: 5, ActiveHigh: true}, {Native: 1}},
		Interrupts:  []int{23, 25},
		Outputs:     []int{17},
	})
	if err != nil {
		t.Fatal(err)
	}
	wantLog := []string{
		"0x28=0x20", // GPIO5 latched low (inactive for active-high)...
		fmt.Sprintf("0x00=%#x", fsel(map[int]Fsel{5: FselOutput})), // ...then made an output
		fmt.Sprintf("0x00=%#x", fsel(map[int]Fsel{5: FselOutput, 7: FselAlt0})),
		fmt.Sprintf("0x00=%#x", fsel(map[int]Fsel{5: FselOutput, 7: FselAlt0, 9: FselAlt0})),
		fmt.Sprintf("0x04=%#x", fsel(map[int]Fsel{10: FselAlt0})),
		fmt.Sprintf("0x04=%#x", fsel(map[int]Fsel{10: FselAlt0, 11: FselAlt0})),
		"0x08=0x0", // GPIO23 input
		fmt.Sprintf("0xe8=%#x", uint32(0b01)<<((23-16)*2)|uint32(0b10)<<((25-16)*2)),
		"0x08=0x0", // GPIO25 input
		fmt.Sprintf("0xe8=%#x", uint32(0b01)<<((23-16)*2)|uint32(0b01)<<((25-16)*2)),
		"0x28=0x20000", // GPIO17 latched low, then output
		fmt.Sprintf("0x04=%#x", fsel(map[int]Fsel{10: FselAlt0, 11: FselAlt0, 17: FselOutput})),
	}
	if !slices.Equal(r.log, wantLog) {
		t.Fatalf("stores\n%q\nwant\n%q", r.log, wantLog)
	}
	noEdgeRegisters(t, r.log)

	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if r.w[0] != 0 || r.w[1] != 0 || r.w[2] != 0 {
		t.Errorf("after Restore GPFSEL0..2 = %#x %#x %#x, want 0", r.w[0], r.w[1], r.w[2])
	}
	if r.w[GPIOPUPPDN0/4] != pup0 || r.w[GPIOPUPPDN0/4+1] != pup1 {
		t.Errorf("after Restore pulls = %#x %#x, want %#x %#x", r.w[GPIOPUPPDN0/4], r.w[GPIOPUPPDN0/4+1], pup0, pup1)
	}
}

func TestSetupPinsActiveLowGPIOChipSelectLatchedHigh(t *testing.T) {
	r := &memRegs{}
	g := NewGPIO(r, SoCBCM2835)
	if _, err := SetupPins(g, PinPlan{ChipSelects: []ChipSelect{{Native: -1, GPIO: 8}}}); err != nil {
		t.Fatal(err)
	}
	if r.log[0] != "0x1c=0x100" || r.log[1] != fmt.Sprintf("0x00=%#x", fsel(map[int]Fsel{8: FselOutput})) {
		t.Fatalf("stores %q: want GPSET0 bit 8 before GPIO8 becomes an output", r.log[:2])
	}
}

func TestSetupPinsRefusals(t *testing.T) {
	tests := []struct {
		name string
		soc  SoC
		plan PinPlan
		want string
	}{
		{"INT on MISO", SoCBCM2837, PinPlan{ChipSelects: []ChipSelect{{Native: 0}}, Interrupts: []int{9}},
			"bcm2835: GPIO9 cannot be both SPI0 MISO and an interrupt input: give each its own pin in the configuration"},
		{"GPIO chip select on SCLK", SoCBCM2837, PinPlan{ChipSelects: []ChipSelect{{Native: -1, GPIO: 11}}},
			"bcm2835: GPIO11 cannot be both SPI0 SCLK and an active-low chip select: give each its own pin in the configuration"},
		{"GPIO chip select on a used native CE", SoCBCM2711,
			PinPlan{ChipSelects: []ChipSelect{{Native: 0}, {Native: -1, GPIO: 8, ActiveHigh: true}}},
			"bcm2835: GPIO8 cannot be both SPI0 CE0 and an active-high chip select: give each its own pin in the configuration"},
		{"INT shared by a chip select", SoCBCM2837,
			PinPlan{ChipSelects: []ChipSelect{{Native: -1, GPIO: 25}}, Interrupts: []int{25}},
			"bcm2835: GPIO25 cannot be both an active-low chip select and an interrupt input: give each its own pin in the configuration"},
		{"pin beyond the BCM2835", SoCBCM2835, PinPlan{Interrupts: []int{54}},
			"bcm2835: GPIO54 (an interrupt input) does not exist on BCM2835 (GPIO0..53): fix the pin number in the configuration"},
		{"negative pin", SoCBCM2711, PinPlan{Outputs: []int{-1}},
			"bcm2835: GPIO-1 (an output) does not exist on BCM2711 (GPIO0..57): fix the pin number in the configuration"},
		{"bad native CE", SoCBCM2837, PinPlan{ChipSelects: []ChipSelect{{Native: 2}}},
			"bcm2835: SPI0 chip select 2 is not 0 (CE0), 1 (CE1) or -1 (a GPIO)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &memRegs{}
			s, err := SetupPins(NewGPIO(r, tc.soc), tc.plan)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error\n%v\nwant\n%s", err, tc.want)
			}
			if s != nil || len(r.log) != 0 {
				t.Errorf("refused plan still wrote %q", r.log)
			}
		})
	}
}

// The BCM2711 accepts GPIO54..57 as an interrupt line (it has 58).
func TestSetupPinsBCM2711HighPins(t *testing.T) {
	r := &memRegs{}
	if _, err := SetupPins(NewGPIO(r, SoCBCM2711), PinPlan{Interrupts: []int{57}}); err != nil {
		t.Fatal(err)
	}
	if got := r.w[(GPFSEL0+20)/4]; got != 0 {
		t.Errorf("GPFSEL5 = %#x", got)
	}
}
