package mcpchip

// Identifiers: TX buffers, RX buffers, filters and masks hold one in four registers,
// SIDH, SIDL, EID8, EID0 (datasheet registers 3-3..3-6, 4-4..4-7, 4-10..4-17):
// SID[10:3] | SID[2:0] in SIDL 7:5, EXIDE/IDE SIDL 3, EID[17:16] in SIDL 1:0 | EID[15:8]
// | EID[7:0]. An extended identifier is SID[10:0] above EID[17:0].

// sid and eid read SID[10:0] and EID[17:0] from b[0:4].
func sid(b []byte) uint32 { return uint32(b[0])<<3 | uint32(b[1])>>5 }
func eid(b []byte) uint32 {
	return uint32(b[1]&sidlEID)<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// getID decodes b[0:4]; ext is SIDL.EXIDE (IDE in an RX buffer).
func getID(b []byte) (id uint32, ext bool) {
	if b[1]&sidlIDE == 0 {
		return sid(b), false
	}
	return sid(b)<<18 | eid(b), true
}

// putID writes id into b[0:4] (an RX buffer's SIDH..EID0): IDE set for ext; SRR,
// EID8 and EID0 zero for a standard identifier.
func putID(b []byte, id uint32, ext bool) {
	s, e := id, uint32(0)
	if ext {
		s, e = id>>18, id&0x3FFFF
	}
	b[0] = byte(s >> 3)
	b[1] = byte(s<<5) | byte(e>>16)&sidlEID
	if ext {
		b[1] |= sidlIDE
	}
	b[2], b[3] = byte(e>>8), byte(e)
}
