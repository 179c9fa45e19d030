// Package layers holds no code: its tests pin cand's shape. One pins the import
// graph, so the layering below stays as it is; another (implements_test.go) has
// every comment saying a type implements an interface backed by a compile-time
// check, `var _ X = (*T)(nil)`.
//
//   - The driver (hw/..., mcp2515, socketcan, canwire, bridge, metrics,
//     internal/mono) is what runs on a Raspberry Pi. It never imports the simulator
//     (sim/...): the virtual Pi fills the same interfaces as the real registers
//     (bcm2835.Regs, an edge event file descriptor), and the daemon picks one from
//     the configuration.
//   - The owner thread (bridge) takes its settings as plain values. It does not know
//     the YAML schema (config): the daemon translates the configuration.
//   - The socketcand server (socketcand/...) serves a socket as any SocketCAN
//     application would: it imports neither the owner thread (bridge) nor the
//     simulator, and takes plain values, not the YAML schema, from the daemon.
//   - The simulator's models of the board, the chip and the bus (sim/soc,
//     sim/mcpchip, sim/canbus, sim/clock) take plain parameters too; sim alone reads
//     the configuration and builds them from it.
//
// The rules cover what each package compiles into the daemon (its non-test files) on
// every target cand builds for (linux/amd64, linux/arm, linux/arm64), and they hold
// through any chain of imports, not only direct ones. Tests may use the simulator:
// that is how the driver is tested without a board.
package layers
