package mcp2515

// The MCP2515 stores an identifier in four registers (SIDH, SIDL, EID8, EID0) in the
// same layout for TX buffers, RX buffers, filters and masks (datasheet registers 3-3..3-7).
// For an extended identifier the 11 most significant bits are SID[10:0] and the
// 18 least significant bits are EID[17:0].

// PutID writes id into b[0:4] as SIDH, SIDL, EID8, EID0. For ext, SIDL.EXIDE is set.
func PutID(b []byte, id uint32, ext bool) {
	_ = b[3]
	if ext {
		sid := id >> 18
		eid := id & 0x3FFFF
		b[0] = byte(sid >> 3)
		b[1] = byte(Bits(sid<<5) | SIDLEXIDE | Bits(eid>>16)&SIDLEIDMask)
		b[2] = byte(eid >> 8)
		b[3] = byte(eid)
		return
	}
	b[0] = byte(id >> 3)
	b[1] = byte(id << 5)
	b[2] = 0
	b[3] = 0
}

// GetID decodes b[0:4] (SIDH, SIDL, EID8, EID0). ext is SIDL.EXIDE (IDE on RX).
func GetID(b []byte) (id uint32, ext bool) {
	_ = b[3]
	sid := uint32(b[0])<<3 | uint32(b[1])>>5
	if Bits(b[1])&SIDLEXIDE == 0 {
		return sid, false
	}
	eid := uint32(Bits(b[1])&SIDLEIDMask)<<16 | uint32(b[2])<<8 | uint32(b[3])
	return sid<<18 | eid, true
}
