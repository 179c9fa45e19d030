// Package canstate is the CAN fault-confinement state of a controller, numbered
// as the kernel's enum can_state (include/uapi/linux/can/netlink.h), so the numbers
// cand exports mean what they mean for a kernel CAN driver. It imports nothing of
// cand.
package canstate

// State is a controller's fault-confinement state (the kernel's CAN_STATE_*).
type State uint8

// The states in the kernel's order, up to bus-off: the ones a controller enters
// by its error counters (CAN_STATE_STOPPED and CAN_STATE_SLEEPING follow there).
const (
	ErrorActive  State = iota // CAN_STATE_ERROR_ACTIVE: TEC and REC below 96
	ErrorWarning              // CAN_STATE_ERROR_WARNING: TEC or REC ≥ 96
	ErrorPassive              // CAN_STATE_ERROR_PASSIVE: TEC or REC ≥ 128
	BusOff                    // CAN_STATE_BUS_OFF: TEC above 255
)

// String returns the state's name: "error-active", "error-warning",
// "error-passive" or "bus-off"; "unknown" for any other value.
func (s State) String() string {
	switch s {
	case ErrorActive:
		return "error-active"
	case ErrorWarning:
		return "error-warning"
	case ErrorPassive:
		return "error-passive"
	case BusOff:
		return "bus-off"
	}
	return "unknown"
}
