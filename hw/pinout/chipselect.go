package pinout

import (
	"encoding"
	"fmt"
	"strconv"
	"strings"
)

// ChipSelect is the spi.chip_select setting: SPI0's native CE0 or CE1 (its pin in
// ALT0, driven by the SPI block), or any other GPIO driven as an output by the
// driver. The zero value is no chip select. Parse one with ParseChipSelect.
type ChipSelect uint8

var _ encoding.TextUnmarshaler = (*ChipSelect)(nil)

// The encoding: a kind bit and the GPIO number.
const (
	csNative  ChipSelect = 0x80 // SPI0's own chip enable
	csGPIO    ChipSelect = 0x40 // a GPIO the driver toggles
	csPinMask ChipSelect = 0x3F
)

// SPI0's native chip selects.
const (
	CE0 = csNative | PinCE0
	CE1 = csNative | PinCE1
)

// ParseChipSelect reads "ce0", "ce1" or "gpioN" (N a BCM GPIO 0..MaxGPIO in
// decimal without leading zeros, not an SPI0 data pin), in any letter case. Its
// error names the bad value and what to write instead.
func ParseChipSelect(s string) (ChipSelect, error) {
	switch {
	case strings.EqualFold(s, "ce0"):
		return CE0, nil
	case strings.EqualFold(s, "ce1"):
		return CE1, nil
	}
	if len(s) > 4 && strings.EqualFold(s[:4], "gpio") {
		if n, ok := gpioNumber(s[4:]); ok {
			if IsSPI0DataPin(n) {
				return 0, fmt.Errorf("%s is an SPI0 data pin (%s); write ce0, ce1 or another gpioN", s, SPI0DataPins())
			}
			return csGPIO | ChipSelect(n), nil
		}
	}
	return 0, fmt.Errorf("%q is not a chip select; write ce0, ce1 or gpioN with N a BCM GPIO 0..%d", s, MaxGPIO)
}

// gpioNumber reads a GPIO number 0..MaxGPIO: decimal digits, no sign, no leading zero.
func gpioNumber(s string) (int, bool) {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n <= MaxGPIO
}

// UnmarshalText parses text with ParseChipSelect.
func (c *ChipSelect) UnmarshalText(text []byte) error {
	v, err := ParseChipSelect(string(text))
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// IsSet reports whether c is a chip select (not the zero value).
func (c ChipSelect) IsSet() bool { return c != 0 }

// Pin is the BCM GPIO that carries the chip select (GPIO8 for CE0, GPIO7 for
// CE1); 0 when c is not set.
func (c ChipSelect) Pin() int { return int(c & csPinMask) }

// CE returns SPI0's chip-enable number, 0 for CE0 and 1 for CE1, and whether c is
// one of them (false for a GPIO chip select and for the zero value).
func (c ChipSelect) CE() (int, bool) {
	switch c {
	case CE0:
		return 0, true
	case CE1:
		return 1, true
	}
	return 0, false
}

// String is the setting as written in lower case: "ce0", "ce1", "gpioN", or
// "none" for the zero value.
func (c ChipSelect) String() string {
	switch {
	case c == 0:
		return "none"
	case c == CE0:
		return "ce0"
	case c == CE1:
		return "ce1"
	}
	return "gpio" + strconv.Itoa(c.Pin())
}
