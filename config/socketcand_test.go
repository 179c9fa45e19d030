package config

import (
	"net/netip"
	"reflect"
	"testing"
)

// The socketcand section: what each key accepts, and where the problem is.
func TestSocketcandErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"off loopback without allow", "socketcand: {enabled: true, listen: 0.0.0.0:29536}\n" + ok500,
			"x.yaml:1:13: socketcand.allow: socketcand listens on 0.0.0.0:29536, off loopback, and its protocol has no authentication: list the clients that may connect, e.g. allow: [192.168.1.0/24], or listen on 127.0.0.1 and tunnel over ssh"},
		{"every address without allow", "socketcand:\n  enabled: true\n  listen: \":29536\"\n" + ok500,
			"x.yaml:2:3: socketcand.allow: socketcand listens on [::]:29536, off loopback, and its protocol has no authentication: list the clients that may connect, e.g. allow: [192.168.1.0/24], or listen on 127.0.0.1 and tunnel over ssh"},
		{"host name", "socketcand: {listen: \"localhost:29536\"}\n" + ok500,
			`x.yaml:1:22: socketcand.listen: "localhost:29536" is not an IP address and port; write e.g. 127.0.0.1:29536, [::1]:29536, or :29536 for every address (host names are not allowed)`},
		{"no port", "socketcand: {listen: 127.0.0.1}\n" + ok500,
			`x.yaml:1:22: socketcand.listen: "127.0.0.1" is not an IP address and port; write e.g. 127.0.0.1:29536, [::1]:29536, or :29536 for every address (host names are not allowed)`},
		{"empty listen", "socketcand: {listen: \"\"}\n" + ok500,
			"x.yaml:1:22: socketcand.listen: required: an IP address and port, e.g. 127.0.0.1:29536"},
		{"bad allow entry", "socketcand: {allow: [10.0.0.0/33, 10.1.2.3]}\n" + ok500,
			`x.yaml:1:22: socketcand.allow[0]: "10.0.0.0/33" is not an IP address or network; write e.g. 192.168.1.7, 192.168.1.0/24 or fd00::/8`},
		{"max clients", "socketcand: {max_clients: 0}\n" + ok500,
			"x.yaml:1:27: socketcand.max_clients: 0 is not allowed: 1..1024 clients at once (default 8)"},
		{"IPv6 beacon", "socketcand: {beacon: \"[ff02::1]:42000\"}\n" + ok500,
			"x.yaml:1:22: socketcand.beacon: [ff02::1]:42000 is not allowed: the beacon is an IPv4 broadcast to a port; give the subnet's broadcast address, e.g. 192.168.1.255:42000"},
		{"kind none without socketcand", "controllers:\n  - bitrate: 500000\n    interface: {kind: none}\n",
			"x.yaml:3:23: controllers[0].interface.kind: a controller without a SocketCAN interface reaches nobody unless socketcand serves it; set socketcand: {enabled: true}, or use kind vcan"},
		{"kind none with a peer", "socketcand: {enabled: true}\ncontrollers:\n  - bitrate: 500000\n    interface: {kind: none, peer: x}\n",
			"x.yaml:4:35: controllers[0].interface.peer: only a vxcan pair has a peer; remove peer or set kind: vxcan"},
		{"unknown kind", "controllers:\n  - bitrate: 500000\n    interface: {kind: non}\n",
			`x.yaml:3:23: controllers[0].interface.kind: "non" is not allowed (did you mean none?); allowed: vcan, vxcan, slcan, none`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseErr(t, "x.yaml", tc.src); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// Addresses and networks are parsed once, when the file is decoded: a host is a
// one-address network, host bits of a network are cleared, IPv4-mapped IPv6 is
// IPv4.
func TestSocketcandParsed(t *testing.T) {
	c, err := Parse("x.yaml", []byte("socketcand:\n  enabled: true\n  listen: 192.168.1.5:30000\n  allow: [192.168.1.7, 10.1.2.3/8, \"::ffff:172.16.0.1\", fd00::/8]\n  max_clients: 2\n  beacon: 192.168.1.255:42000\ncontrollers:\n  - bitrate: 500000\n    interface: {name: can0, kind: none}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Socketcand{
		Enabled: true,
		Listen:  AddrPort{netip.MustParseAddrPort("192.168.1.5:30000")},
		Allow: []ClientNet{
			{netip.MustParsePrefix("192.168.1.7/32")},
			{netip.MustParsePrefix("10.0.0.0/8")},
			{netip.MustParsePrefix("172.16.0.1/32")},
			{netip.MustParsePrefix("fd00::/8")},
		},
		MaxClients: 2,
		Beacon:     AddrPort{netip.MustParseAddrPort("192.168.1.255:42000")},
	}
	if !reflect.DeepEqual(c.Socketcand, want) {
		t.Errorf("got %+v\nwant %+v", c.Socketcand, want)
	}
	if c.Controllers[0].Interface.Kind != KindNone || len(c.Warnings) != 0 {
		t.Errorf("interface %+v, warnings %q", c.Controllers[0].Interface, c.Warnings)
	}
}

func TestSocketcandBeaconOnLoopbackWarns(t *testing.T) {
	c, err := Parse("x.yaml", []byte("socketcand: {enabled: true, beacon: 192.168.1.255:42000}\n"+ok500))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"x.yaml:1:37: socketcand.beacon: announces 127.0.0.1:29536, a loopback address remote tools cannot reach; set listen to an address of this host (with allow)"}
	if !reflect.DeepEqual(c.Warnings, want) {
		t.Errorf("warnings %q, want %q", c.Warnings, want)
	}
}
