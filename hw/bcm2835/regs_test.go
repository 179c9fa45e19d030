package bcm2835

import "testing"

// The GPIO registers and fields the register map computes per pin, against BCM2835
// ARM Peripherals §6.1 (and the BCM2711's GPIO_PUP_PDN_CNTRL_REGn), and SPI0's CS
// polarity bits (§10.5).
func TestRegisterFunctionsMatchTheDatasheet(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uint32
	}{
		{"GPFSEL0 for GPIO9", uint32(GPFSELn(9)), 0x00},
		{"GPFSEL1 for GPIO17", uint32(GPFSELn(17)), 0x04},
		{"GPFSEL5 for GPIO53", uint32(GPFSELn(53)), 0x14},
		{"FSEL17 shift", FselShift(17), 21},
		{"GPSET0 for GPIO4", uint32(GPSETn(4)), 0x1C},
		{"GPSET1 for GPIO40", uint32(GPSETn(40)), 0x20},
		{"GPCLR1 for GPIO53", uint32(GPCLRn(53)), 0x2C},
		{"GPLEV1 for GPIO33", uint32(GPLEVn(33)), 0x38},
		{"GPLEV0 for GPIO64 (masked into the banks)", uint32(GPLEVn(64)), 0x34},
		{"GPPUDCLK1 for GPIO40", uint32(GPPUDCLKn(40)), 0x9C},
		{"GPIO_PUP_PDN_CNTRL_REG1 for GPIO17", uint32(GPIOPUPPDNn(17)), 0xE8},
		{"PUP_PDN17 shift", PupPdnShift(17), 2},
		{"GPIO40's bit", PinBit(40), 1 << 8},
		{"CSPOL1", uint32(CSCSPOLn(1)), 1 << 22},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
}
