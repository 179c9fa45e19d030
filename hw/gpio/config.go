package gpio

import (
	"fmt"
	"time"
)

// Bias is a line's pull resistor.
type Bias uint8

const (
	BiasAsIs     Bias = iota // leave the pull as firmware or a previous user set it
	BiasPullUp               // GPIO_V2_LINE_FLAG_BIAS_PULL_UP
	BiasPullDown             // GPIO_V2_LINE_FLAG_BIAS_PULL_DOWN
	BiasDisabled             // GPIO_V2_LINE_FLAG_BIAS_DISABLED
)

func (b Bias) String() string {
	switch b {
	case BiasAsIs:
		return "as-is"
	case BiasPullUp:
		return "pull-up"
	case BiasPullDown:
		return "pull-down"
	case BiasDisabled:
		return "disabled"
	}
	return fmt.Sprintf("Bias(%d)", uint8(b))
}

// Edge selects which transitions of an input line produce events.
type Edge uint8

const (
	EdgeNone    Edge = iota // no events; the line is read with Value only
	EdgeFalling             // GPIO_V2_LINE_FLAG_EDGE_FALLING (the MCP2515's INT is active low)
	EdgeRising              // GPIO_V2_LINE_FLAG_EDGE_RISING
	EdgeBoth                // both flags
)

func (e Edge) String() string {
	switch e {
	case EdgeNone:
		return "none"
	case EdgeFalling:
		return "falling"
	case EdgeRising:
		return "rising"
	case EdgeBoth:
		return "both"
	}
	return fmt.Sprintf("Edge(%d)", uint8(e))
}

// LineConfig is how RequestLine configures one input line.
type LineConfig struct {
	// Consumer labels the line in the kernel (gpioinfo, line info); at most 31 bytes.
	Consumer string
	Bias     Bias
	Edge     Edge
	// Debounce filters the line in the kernel (in software if the chip has no
	// debouncer); applies to Value and to events. 0 = off; truncated to whole µs.
	Debounce time.Duration
	// EventBufferSize is a hint for the kernel's event queue length; 0 = the kernel's
	// default (16 per line). On overflow the kernel drops the oldest event.
	EventBufferSize uint32
	// ActiveLow inverts the line: Value reports the active (low) level as true, and
	// rising/falling refer to the logical value (the kernel swaps the IRQ trigger).
	ActiveLow bool
}

// maxDebounce is the largest debounce_period_us (a u32 of microseconds).
const maxDebounce = time.Duration(1<<32-1) * time.Microsecond

// request builds the gpio_v2_line_request for one input line at offset.
func (c *LineConfig) request(offset uint32) (lineRequest, error) {
	var r lineRequest
	if len(c.Consumer) >= maxNameSize {
		return r, fmt.Errorf("gpio: consumer label %q is %d bytes; the kernel keeps at most %d: shorten it",
			c.Consumer, len(c.Consumer), maxNameSize-1)
	}
	if c.Debounce < 0 || c.Debounce > maxDebounce {
		return r, fmt.Errorf("gpio: debounce %v out of range: use 0 (off) up to %v", c.Debounce, maxDebounce)
	}
	if c.Debounce > 0 && c.Debounce < time.Microsecond {
		return r, fmt.Errorf("gpio: debounce %v is below the kernel's 1µs resolution: use 0 (off) or at least 1µs", c.Debounce)
	}
	flags := LineFlagInput
	switch c.Bias {
	case BiasAsIs:
	case BiasPullUp:
		flags |= LineFlagBiasPullUp
	case BiasPullDown:
		flags |= LineFlagBiasPullDown
	case BiasDisabled:
		flags |= LineFlagBiasDisabled
	default:
		return r, fmt.Errorf("gpio: unknown %v: use BiasAsIs, BiasPullUp, BiasPullDown or BiasDisabled", c.Bias)
	}
	switch c.Edge {
	case EdgeNone:
	case EdgeFalling:
		flags |= LineFlagEdgeFalling
	case EdgeRising:
		flags |= LineFlagEdgeRising
	case EdgeBoth:
		flags |= LineFlagEdgeRising | LineFlagEdgeFalling
	default:
		return r, fmt.Errorf("gpio: unknown %v: use EdgeNone, EdgeFalling, EdgeRising or EdgeBoth", c.Edge)
	}
	if c.ActiveLow {
		flags |= LineFlagActiveLow
	}
	r.Offsets[0] = offset
	r.NumLines = 1
	copy(r.Consumer[:], c.Consumer)
	r.EventBufferSize = c.EventBufferSize
	r.Config.Flags = uint64(flags)
	if c.Debounce > 0 {
		r.Config.Attrs[0] = lineConfigAttribute{
			Attr: lineAttribute{ID: attrIDDebounce, Data: uint64(c.Debounce / time.Microsecond)},
			Mask: 1, // offsets[0]
		}
		r.Config.NumAttrs = 1
	}
	return r, nil
}
