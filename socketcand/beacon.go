package socketcand

import (
	"fmt"
	"net"
	"net/netip"
	"time"

	"cand/socketcand/protocol"
)

// startBeacon sends the discovery beacon to cfg.Beacon now and every
// BeaconEvery until Close. Its URL is the listener's address or, when the
// listener takes every address, the address the beacon leaves from.
func (s *Server) startBeacon() error {
	conn, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(s.cfg.Beacon))
	if err != nil {
		return fmt.Errorf("socketcand: beacon to %s: %w", s.cfg.Beacon, err)
	}
	addr := s.listenAddr()
	if addr.Addr().IsUnspecified() {
		from := conn.LocalAddr().(*net.UDPAddr).AddrPort().Addr().Unmap()
		addr = netip.AddrPortFrom(from, addr.Port())
	}
	b := protocol.Beacon{Name: s.cfg.Name, Description: s.cfg.Description, Addr: addr}
	for _, bus := range s.buses {
		b.Buses = append(b.Buses, bus.name)
	}
	msg := protocol.AppendBeacon(nil, b)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer conn.Close()
		t := time.NewTicker(s.cfg.BeaconEvery)
		defer t.Stop()
		failing := false
		for {
			_, err := conn.Write(msg)
			if err != nil && !failing {
				s.log.Warn("socketcand: beacon not sent", "to", s.cfg.Beacon, "err", err)
			}
			failing = err != nil
			select {
			case <-s.done:
				return
			case <-t.C:
			}
		}
	}()
	return nil
}
