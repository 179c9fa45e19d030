package socketcand

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"cand/socketcand/protocol"
)

// Config is how the server runs.
type Config struct {
	// Listen is the TCP address, host:port (port 0: any free one; see Addr).
	Listen string
	// Allow lists the client networks that may connect. Empty: any client, which
	// Start allows only on a loopback address: the protocol has no authentication.
	Allow []netip.Prefix
	// MaxClients bounds the clients connected at once; 0 means 1.
	MaxClients int
	// Beacon, when valid, is the UDP address the discovery beacon is sent to
	// every BeaconEvery (default 2 s; the protocol text asks for at most 3 s).
	Beacon      netip.AddrPort
	BeaconEvery time.Duration
	// Name and Description go into the beacon (the host name; what offers the buses).
	Name, Description string
	Log               *slog.Logger // default slog.Default()
}

// DefaultBeaconEvery is the beacon's interval.
const DefaultBeaconEvery = 2 * time.Second

// Bus is one bus the server offers.
type Bus struct {
	Name string // what "< open name >" takes: the controller's interface name
	// Fd carries 16-byte struct can_frame records both ways (a CAN_RAW socket, or
	// one end of a SOCK_SEQPACKET socketpair); non-blocking. The server owns it
	// from Start on and closes it.
	Fd int
	// Stats returns the bus's counters for "< stat ... >" (control mode).
	Stats func() protocol.Stat
}

// Server is a running socketcand server.
type Server struct {
	cfg   Config
	log   *slog.Logger
	ln    net.Listener
	buses []*bus // in the order given, for the beacon
	done  chan struct{}
	wg    sync.WaitGroup // the accept loop, the buses, the beacon, the clients

	mu      sync.Mutex
	clients map[*client]struct{}
	closed  bool
}

// rejectTimeout bounds the write of the error a refused client is told.
const rejectTimeout = time.Second

// Start listens on cfg.Listen and serves buses until Close. It takes ownership
// of every bus's Fd, also when it fails.
func Start(cfg Config, buses []Bus) (*Server, error) {
	s := &Server{cfg: cfg, log: cfg.Log, done: make(chan struct{}), clients: map[*client]struct{}{}}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.cfg.MaxClients < 1 {
		s.cfg.MaxClients = 1
	}
	if s.cfg.BeaconEvery <= 0 {
		s.cfg.BeaconEvery = DefaultBeaconEvery
	}
	for _, b := range buses {
		s.buses = append(s.buses, newBus(b, s.log))
	}
	err := s.listen()
	if err == nil && cfg.Beacon.IsValid() {
		err = s.startBeacon()
	}
	if err != nil {
		if s.ln != nil {
			s.ln.Close()
		}
		for _, b := range s.buses {
			b.f.Close()
		}
		return nil, err
	}
	for _, b := range s.buses {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			b.run()
		}()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.accept()
	}()
	return s, nil
}

func (s *Server) listen() error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("socketcand: cannot listen on %s: %w (set socketcand.listen to a free address)", s.cfg.Listen, err)
	}
	s.ln = ln
	if a := s.listenAddr().Addr(); !a.IsLoopback() && len(s.cfg.Allow) == 0 {
		return fmt.Errorf("socketcand: %s is not a loopback address and no clients are allowed by address: the protocol has no authentication; give socketcand.allow", s.cfg.Listen)
	}
	return nil
}

// listenAddr is the address the listener is bound to, IPv4 unmapped.
func (s *Server) listenAddr() netip.AddrPort {
	ap := s.ln.Addr().(*net.TCPAddr).AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops accepting, disconnects every client, stops the beacon and the
// buses, closes the buses' descriptors, and waits for all of it.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for c := range s.clients {
		c.stop()
	}
	s.mu.Unlock()
	close(s.done)
	err := s.ln.Close()
	for _, b := range s.buses {
		b.f.Close()
	}
	s.wg.Wait()
	return err
}

// acceptRetry is the pause after a failed accept (out of descriptors, say).
const acceptRetry = 100 * time.Millisecond

func (s *Server) accept() {
	for {
		conn, err := s.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			s.log.Warn("socketcand: accept", "err", err)
			select {
			case <-s.done:
				return
			case <-time.After(acceptRetry):
			}
			continue
		}
		s.admit(conn)
	}
}

// admit serves conn if its address is allowed and a client more fits.
func (s *Server) admit(conn net.Conn) {
	peer := conn.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
	if !s.allowed(peer) {
		s.log.Warn("socketcand: client refused: its address is not in socketcand.allow", "client", conn.RemoteAddr())
		reject(conn, "client address not allowed")
		return
	}
	s.mu.Lock()
	if s.closed || len(s.clients) >= s.cfg.MaxClients {
		closed := s.closed
		s.mu.Unlock()
		if !closed {
			s.log.Warn("socketcand: client refused: too many clients", "client", conn.RemoteAddr(), "max_clients", s.cfg.MaxClients)
		}
		reject(conn, "too many clients")
		return
	}
	c := newClient(s, conn)
	s.clients[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		s.log.Info("socketcand: client connected", "client", conn.RemoteAddr())
		c.serve()
		s.mu.Lock()
		delete(s.clients, c)
		s.mu.Unlock()
		s.log.Info("socketcand: client disconnected", "client", conn.RemoteAddr(), "frames_dropped", c.dropped.Load())
	}()
}

func (s *Server) allowed(peer netip.Addr) bool {
	if len(s.cfg.Allow) == 0 {
		return true
	}
	for _, p := range s.cfg.Allow {
		if p.Contains(peer) {
			return true
		}
	}
	return false
}

// reject tells a refused client why, and hangs up.
func reject(conn net.Conn, why string) {
	conn.SetWriteDeadline(time.Now().Add(rejectTimeout))
	conn.Write(protocol.AppendError(nil, why))
	conn.Close()
}

// bus returns the bus named name, or nil.
func (s *Server) bus(name string) *bus {
	for _, b := range s.buses {
		if b.name == name {
			return b
		}
	}
	return nil
}
