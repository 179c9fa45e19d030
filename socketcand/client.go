package socketcand

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"cand/socketcand/protocol"
)

// mode is a client's state in the protocol.
type mode uint8

const (
	modeNoBus   mode = iota // connected, no bus opened yet
	modeBCM                 // bus open; the default mode (its jobs are not offered)
	modeRaw                 // every frame on the bus, as it comes
	modeControl             // statistics
)

// client is one connection.
type client struct {
	s       *Server
	conn    net.Conn
	out     chan item
	done    chan struct{} // closed by stop
	written chan struct{} // closed when writeLoop ends
	once    sync.Once
	dropped atomic.Uint64 // frames dropped because the client was behind

	mode mode // reader goroutine only
	bus  *bus // set by open
}

func newClient(s *Server, conn net.Conn) *client {
	return &client{s: s, conn: conn, out: make(chan item, outboxSize), done: make(chan struct{}), written: make(chan struct{})}
}

// stop disconnects the client; any goroutine may call it, more than once.
func (c *client) stop() {
	c.once.Do(func() {
		close(c.done)
		c.conn.Close()
	})
}

// serve greets the client, carries out its commands until it hangs up or is
// hung up on, and returns once its writer has stopped.
func (c *client) serve() {
	go c.writeLoop()
	defer func() {
		if c.bus != nil {
			c.bus.leave(c)
		}
		<-c.written
	}()
	c.reply(protocol.MsgHi)
	rd := protocol.NewReader(c.conn)
	for {
		msg, err := rd.Next()
		if errors.Is(err, protocol.ErrTooLong) {
			c.hangUp("message too long")
			return
		}
		if err != nil {
			c.stop()
			return
		}
		cmd, err := protocol.ParseCommand(msg)
		var goOn bool
		if c.mode == modeNoBus {
			goOn = c.noBus(cmd, err)
		} else {
			goOn = c.onBus(cmd, err)
		}
		if !goOn {
			return
		}
	}
}

// noBus handles a command before a bus is open: only open is allowed; as in the
// reference server, a bus it cannot open ends the connection.
func (c *client) noBus(cmd protocol.Command, err error) bool {
	switch cmd.Verb {
	case protocol.Open:
		b := c.s.bus(cmd.Bus)
		if err != nil || b == nil {
			c.hangUp("could not open bus")
			return false
		}
		c.bus, c.mode = b, modeBCM
		c.reply(protocol.MsgOK)
	case protocol.BusConfig:
		c.hangUp("cand sets bit timing and controller modes from its configuration file")
		return false
	default:
		c.replyError("unknown command")
	}
	return true
}

// onBus handles a command once a bus is open.
func (c *client) onBus(cmd protocol.Command, err error) bool {
	if err != nil {
		c.replyError(err.Error())
		return true
	}
	switch {
	case cmd.Verb == protocol.RawMode:
		c.switchTo(modeRaw)
	case cmd.Verb == protocol.BCMMode:
		c.switchTo(modeBCM)
	case cmd.Verb == protocol.ControlMode:
		c.switchTo(modeControl)
	case cmd.Verb == protocol.ISOTPMode:
		c.replyError("isotp mode is not supported")
	case cmd.Verb == protocol.Echo:
		c.reply(protocol.MsgEcho)
	case cmd.Verb == protocol.Send && c.mode != modeControl:
		if err := c.bus.send(c, cmd.Frame); err != nil {
			c.replyError("send failed: " + err.Error())
		}
	case cmd.Verb == protocol.Statistics && c.mode == modeControl:
		c.enqueue(item{setStats: true, stats: time.Duration(cmd.IntervalMs) * time.Millisecond})
	case cmd.Verb == protocol.BCMJob && c.mode == modeBCM:
		c.replyError(cmd.Word + " is not supported: use rawmode")
	default:
		c.replyError("unknown command")
	}
	return true
}

// switchTo changes mode and answers "< ok >": no frame of raw mode comes
// before the ok of entering it or after the ok of leaving it, and statistics
// stop when control mode is left.
func (c *client) switchTo(m mode) {
	if c.mode == modeRaw && m != modeRaw {
		c.bus.leave(c)
	}
	if c.mode == modeControl && m != modeControl {
		c.enqueue(item{setStats: true})
	}
	if m == modeRaw && c.mode != modeRaw {
		c.mode = m
		c.bus.join(c, item{text: []byte(protocol.MsgOK), reply: true})
		return
	}
	c.mode = m
	c.reply(protocol.MsgOK)
}
