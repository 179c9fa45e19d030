package pinout

import "testing"

// BCM2835 ARM Peripherals §6.2: SPI0 in ALT0 is GPIO7 CE1, GPIO8 CE0, GPIO9 MISO,
// GPIO10 MOSI, GPIO11 SCLK.
func TestSPI0Pins(t *testing.T) {
	if PinCE1 != 7 || PinCE0 != 8 || PinMISO != 9 || PinMOSI != 10 || PinSCLK != 11 {
		t.Errorf("SPI0 pins CE1 %d, CE0 %d, MISO %d, MOSI %d, SCLK %d; want 7, 8, 9, 10, 11", PinCE1, PinCE0, PinMISO, PinMOSI, PinSCLK)
	}
	for n := -1; n <= NumGPIOBCM2711; n++ {
		want := n >= 9 && n <= 11
		if IsSPI0DataPin(n) != want {
			t.Errorf("IsSPI0DataPin(%d) = %v, want %v", n, !want, want)
		}
	}
	if got := SPI0DataPins(); got != "MISO 9, MOSI 10, SCLK 11" {
		t.Errorf("SPI0DataPins() = %q", got)
	}
}
