package mcp2515

import "testing"

// The data bytes after a READ RX BUFFER header, from SIDL and DLC alone.
func TestRxDataLen(t *testing.T) {
	for _, c := range []struct {
		name      string
		sidl, dlc Bits
		want      int
	}{
		{"standard dlc 0", 0, 0, 0},
		{"standard dlc 1", 0, 1, 1},
		{"standard dlc 8", 0, 8, 8},
		{"standard dlc 15: 8 bytes", 0, 15, 8},
		{"standard remote", SIDLSRR, 8, 0},
		{"standard, DLC.RTR is not its RTR", 0, DLCRTR | 4, 4},
		{"extended dlc 5", SIDLEXIDE, 5, 5},
		{"extended remote", SIDLEXIDE, DLCRTR | 8, 0},
		{"extended, SIDL.SRR is not its RTR", SIDLEXIDE | SIDLSRR, 3, 3},
	} {
		head := []byte{0, 0, byte(c.sidl), 0, 0, byte(c.dlc)}
		if got := rxDataLen(head); got != c.want {
			t.Errorf("%s: rxDataLen(SIDL %#02x, DLC %#02x) = %d, want %d", c.name, c.sidl, c.dlc, got, c.want)
		}
	}
}
