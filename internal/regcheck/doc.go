// Package regcheck holds no code: its test checks what the register types of
// mcp2515 (Addr, Bits, Mode, Status) and hw/bcm2835 (SPIReg, GPIOReg, STReg,
// CS, Fsel) cannot, since Go converts an untyped constant to any of them silently.
//
//   - No register helper is handed a bare number: in the module's non-test code,
//     an argument whose parameter has a register type, and a conversion to a
//     register type, is never an untyped constant written only with literals
//     (a named constant is one of the register map's). A field value of 0 (no
//     fields set) is allowed; a register address or offset of 0 is not.
//   - Registers are computed in their declaration files only: in mcp2515 and
//     hw/bcm2835 outside regs.go and id.go (the identifier's layout in the
//     four ID registers), no arithmetic on a register address or offset, and no
//     bitwise operation with a literal mask on a register value or written in
//     hex or binary.
//
// Test files are not checked: the register-table tests write the datasheet's
// numbers on purpose, so that a misread constant fails them.
package regcheck
