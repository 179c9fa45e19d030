package metrics

import (
	"fmt"
	"strings"
	"testing"

	"cand/canstate"
)

// cand_bus_state exports the canstate numbers, and its help text names each one.
func TestBusStateHelpNamesCANStates(t *testing.T) {
	r := New("test")
	c := r.AddController("can0", "vcan0")
	c.BusState.Set(int64(canstate.BusOff))
	var states []string
	for s := canstate.ErrorActive; s <= canstate.BusOff; s++ {
		states = append(states, fmt.Sprintf("%d %s", s, s))
	}
	text := scrapeText(t, r.Handler())
	for _, line := range []string{
		"# HELP cand_bus_state CAN fault-confinement state: " + strings.Join(states, ", ") + ".",
		`cand_bus_state{controller="can0",interface="vcan0"} 3`,
	} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("exposition lacks %q", line)
		}
	}
}
