package config

import (
	"encoding"
	"fmt"
	"net/netip"
	"strings"
)

// Socketcand is the optional socketcand server (package socketcand): remote tools
// such as python-can reach the controllers' buses over TCP with the socketcand
// protocol (https://github.com/linux-can/socketcand, doc/protocol.md). A client
// opens a bus by the controller's interface name.
type Socketcand struct {
	Enabled bool `yaml:"enabled"` // default false
	// Listen is IP:port; default 127.0.0.1:29536, the protocol's port on loopback.
	// ":port" listens on every address; port 0 takes a free one (cand logs it).
	// Off loopback, Allow is required: the protocol has no authentication.
	Listen AddrPort `yaml:"listen"`
	// Allow lists the client addresses (10.0.0.7) and networks (192.168.1.0/24)
	// that may connect; empty = any client, allowed only with a loopback Listen.
	Allow []ClientNet `yaml:"allow"`
	// MaxClients bounds the clients connected at once, 1..1024; default 8.
	MaxClients int `yaml:"max_clients"`
	// Beacon is the IPv4 address and port the discovery beacon is sent to every
	// 2 s, e.g. 192.168.1.255:42000 (the subnet's broadcast address and the
	// protocol's beacon port); not set (default) = no beacon.
	Beacon AddrPort `yaml:"beacon"`
}

// Socketcand defaults.
const (
	DefaultSocketcandListen     = "127.0.0.1:29536"
	DefaultSocketcandMaxClients = 8
	maxSocketcandClients        = 1024
)

// AddrPort is an IP address and port written "192.168.1.5:29536", "[::1]:29536",
// or ":29536" for every address (the unspecified address); "" is not set.
type AddrPort struct{ netip.AddrPort }

var _ encoding.TextUnmarshaler = (*AddrPort)(nil)

// UnmarshalText parses the address; a host name is refused (the loopback check
// and the beacon need the address itself).
func (a *AddrPort) UnmarshalText(text []byte) error {
	s := string(text)
	if s == "" {
		*a = AddrPort{}
		return nil
	}
	if strings.HasPrefix(s, ":") {
		s = "[::]" + s
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return fmt.Errorf("%q is not an IP address and port; write e.g. 127.0.0.1:29536, [::1]:29536, or :29536 for every address (host names are not allowed)", string(text))
	}
	a.AddrPort = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	return nil
}

// ClientNet is an allowed client address ("10.0.0.7", one host) or network
// ("192.168.1.0/24").
type ClientNet struct{ netip.Prefix }

var _ encoding.TextUnmarshaler = (*ClientNet)(nil)

// UnmarshalText parses an address or a CIDR prefix.
func (c *ClientNet) UnmarshalText(text []byte) error {
	s := string(text)
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		a = a.Unmap()
		c.Prefix = netip.PrefixFrom(a, a.BitLen())
		return nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return fmt.Errorf("%q is not an IP address or network; write e.g. 192.168.1.7, 192.168.1.0/24 or fd00::/8", s)
	}
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	c.Prefix = p.Masked()
	return nil
}

// socketcand checks the section, and the controllers without a SocketCAN
// interface (kind none), whose frames reach only socketcand's clients.
func (v checker) socketcand(c *Config) {
	s := &c.Socketcand
	for i, ct := range c.Controllers {
		if ct.Interface.Kind == KindNone && !s.Enabled {
			v.fail(fmt.Sprintf("controllers[%d].interface.kind", i), "a controller without a SocketCAN interface reaches nobody unless socketcand serves it; set socketcand: {enabled: true}, or use kind vcan")
		}
	}
	if !s.Listen.IsValid() {
		v.fail("socketcand.listen", "required: an IP address and port, e.g. %s", DefaultSocketcandListen)
	} else if s.Enabled && !s.Listen.Addr().IsLoopback() && len(s.Allow) == 0 {
		v.fail("socketcand.allow", "socketcand listens on %s, off loopback, and its protocol has no authentication: list the clients that may connect, e.g. allow: [192.168.1.0/24], or listen on 127.0.0.1 and tunnel over ssh", s.Listen)
	}
	if s.MaxClients < 1 || s.MaxClients > maxSocketcandClients {
		v.fail("socketcand.max_clients", "%d is not allowed: 1..%d clients at once (default %d)", s.MaxClients, maxSocketcandClients, DefaultSocketcandMaxClients)
	}
	if b := s.Beacon; b.IsValid() {
		switch {
		case !b.Addr().Is4() || b.Addr().IsUnspecified() || b.Port() == 0:
			v.fail("socketcand.beacon", "%s is not allowed: the beacon is an IPv4 broadcast to a port; give the subnet's broadcast address, e.g. 192.168.1.255:42000", b)
		case s.Enabled && s.Listen.Addr().IsLoopback() && !b.Addr().IsLoopback():
			v.warn("socketcand.beacon", "announces %s, a loopback address remote tools cannot reach; set listen to an address of this host (with allow)", s.Listen)
		}
	}
}
