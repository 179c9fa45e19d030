package canstate

import "testing"

// The numbers are the kernel's CAN_STATE_* values; they are exported as metrics.
func TestStateNumbersAndNames(t *testing.T) {
	for _, c := range []struct {
		s    State
		n    uint8
		name string
	}{
		{ErrorActive, 0, "error-active"},
		{ErrorWarning, 1, "error-warning"},
		{ErrorPassive, 2, "error-passive"},
		{BusOff, 3, "bus-off"},
		{BusOff + 1, 4, "unknown"},
		{255, 255, "unknown"},
	} {
		if uint8(c.s) != c.n || c.s.String() != c.name {
			t.Errorf("state %d is %q; want %d %q", uint8(c.s), c.s.String(), c.n, c.name)
		}
	}
}
