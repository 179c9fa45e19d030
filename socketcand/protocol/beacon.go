package protocol

import (
	"bytes"
	"encoding/xml"
	"net/netip"
)

// Beacon is the discovery beacon: which host offers which buses, and where.
type Beacon struct {
	Name        string         // the device, e.g. the host name
	Description string         // human-readable, optional
	Addr        netip.AddrPort // the server's address: <URL>can://Addr</URL>
	Buses       []string       // the names open takes
}

// AppendBeacon appends the beacon's XML, as in the protocol text:
//
//	<CANBeacon name="pi" type="SocketCAN" description="cand"><URL>can://192.168.1.5:29536</URL><Bus name="can0"/></CANBeacon>
func AppendBeacon(dst []byte, b Beacon) []byte {
	w := bytes.NewBuffer(dst)
	w.WriteString(`<CANBeacon name="`)
	xml.EscapeText(w, []byte(b.Name))
	w.WriteString(`" type="SocketCAN" description="`)
	xml.EscapeText(w, []byte(b.Description))
	w.WriteString(`"><URL>can://`)
	w.WriteString(b.Addr.String())
	w.WriteString(`</URL>`)
	for _, bus := range b.Buses {
		w.WriteString(`<Bus name="`)
		xml.EscapeText(w, []byte(bus))
		w.WriteString(`"/>`)
	}
	w.WriteString(`</CANBeacon>`)
	return w.Bytes()
}
