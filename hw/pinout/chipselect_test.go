package pinout

import "testing"

func TestParseChipSelect(t *testing.T) {
	for _, c := range []struct {
		in   string
		want ChipSelect
		pin  int
		ce   int // -1: not a native CE
		str  string
	}{
		{"ce0", CE0, 8, 0, "ce0"},
		{"ce1", CE1, 7, 1, "ce1"},
		{"CE0", CE0, 8, 0, "ce0"},
		{"Ce1", CE1, 7, 1, "ce1"},
		{"gpio0", csGPIO | 0, 0, -1, "gpio0"},
		{"gpio5", csGPIO | 5, 5, -1, "gpio5"},
		{"GPIO5", csGPIO | 5, 5, -1, "gpio5"},
		{"GpIo24", csGPIO | 24, 24, -1, "gpio24"},
		{"gpio8", csGPIO | 8, 8, -1, "gpio8"}, // CE0's pin, driven as a GPIO
		{"gpio53", csGPIO | 53, 53, -1, "gpio53"},
	} {
		got, err := ParseChipSelect(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseChipSelect(%q) = %#x, %v; want %#x", c.in, uint8(got), err, uint8(c.want))
			continue
		}
		ce, native := got.CE()
		if !native {
			ce = -1
		}
		if !got.IsSet() || got.Pin() != c.pin || ce != c.ce || got.String() != c.str {
			t.Errorf("%q: IsSet %v, Pin %d, CE %d, String %q; want true, %d, %d, %q", c.in, got.IsSet(), got.Pin(), ce, got, c.pin, c.ce, c.str)
		}
	}
}

func TestParseChipSelectRejects(t *testing.T) {
	const notCS = ` is not a chip select; write ce0, ce1 or gpioN with N a BCM GPIO 0..53`
	const dataPin = ` is an SPI0 data pin (MISO 9, MOSI 10, SCLK 11); write ce0, ce1 or another gpioN`
	for _, c := range []struct{ in, msg string }{
		{"", `""` + notCS},
		{"ce2", `"ce2"` + notCS},
		{"CE2", `"CE2"` + notCS},
		{" ce0", `" ce0"` + notCS},
		{"ce0 ", `"ce0 "` + notCS},
		{"ce", `"ce"` + notCS},
		{"gpio", `"gpio"` + notCS},
		{"gpio54", `"gpio54"` + notCS},
		{"GPIO54", `"GPIO54"` + notCS},
		{"gpio100", `"gpio100"` + notCS},
		{"gpio99999999999999999999", `"gpio99999999999999999999"` + notCS},
		{"gpio05", `"gpio05"` + notCS},
		{"gpio-1", `"gpio-1"` + notCS},
		{"gpio+5", `"gpio+5"` + notCS},
		{"gpio 5", `"gpio 5"` + notCS},
		{"gpio5x", `"gpio5x"` + notCS},
		{"gpio0x5", `"gpio0x5"` + notCS},
		{"pin5", `"pin5"` + notCS},
		{"8", `"8"` + notCS},
		{"gpio9", "gpio9" + dataPin},
		{"gpio10", "gpio10" + dataPin},
		{"GPIO11", "GPIO11" + dataPin},
	} {
		got, err := ParseChipSelect(c.in)
		if err == nil || err.Error() != c.msg || got != 0 {
			t.Errorf("ParseChipSelect(%q) = %v, %v; want error %q", c.in, got, err, c.msg)
		}
	}
}

func TestChipSelectZeroValue(t *testing.T) {
	var cs ChipSelect
	if _, native := cs.CE(); cs.IsSet() || native || cs.Pin() != 0 || cs.String() != "none" {
		t.Errorf("zero ChipSelect: IsSet %v, native %v, Pin %d, String %q; want false, false, 0, none", cs.IsSet(), native, cs.Pin(), cs)
	}
}

func TestChipSelectUnmarshalText(t *testing.T) {
	cs := CE1
	if err := cs.UnmarshalText([]byte("GPIO22")); err != nil || cs.Pin() != 22 {
		t.Fatalf("UnmarshalText(GPIO22): %v, pin %d; want gpio22", err, cs.Pin())
	}
	if err := cs.UnmarshalText([]byte("gpio10")); err == nil || cs.Pin() != 22 {
		t.Fatalf("UnmarshalText(gpio10): %v, now %v; want an error and gpio22 kept", err, cs)
	}
}
