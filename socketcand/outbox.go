package socketcand

import (
	"bufio"
	"time"

	"cand/socketcand/protocol"
)

// outboxSize is how many messages wait for a client before its frames are
// dropped: at 1 Mbit/s about 0.1 s of back-to-back frames.
const outboxSize = 1024

// writeTimeout disconnects a client that takes nothing for this long.
const writeTimeout = 30 * time.Second

// item is one thing for the writer, in order: a message, a change of the
// statistics interval, or the last message before hanging up.
type item struct {
	text     []byte
	reply    bool          // an answer to a command: written at once, on its own
	setStats bool          // stats is the new statistics interval (0: off)
	stats    time.Duration //
	last     bool          // hang up once text is written
}

// offer queues a frame for the client, or drops it if the client is behind.
func (c *client) offer(msg []byte) {
	select {
	case c.out <- item{text: msg}:
	default:
		if c.dropped.Add(1) == 1 {
			c.s.log.Warn("socketcand: client too slow: dropping frames", "client", c.conn.RemoteAddr())
		}
	}
}

// enqueue queues it, waiting for room unless the client is gone.
func (c *client) enqueue(it item) {
	select {
	case c.out <- it:
	case <-c.done:
	}
}

func (c *client) reply(msg string) { c.enqueue(item{text: []byte(msg), reply: true}) }

func (c *client) replyError(text string) {
	c.enqueue(item{text: protocol.AppendError(nil, text), reply: true})
}

// hangUp sends "< error text >" and then closes the connection.
func (c *client) hangUp(text string) {
	c.enqueue(item{text: protocol.AppendError(nil, text), reply: true, last: true})
}

// writeLoop writes the client's items in order, frames that are waiting
// together in one write, replies each in a write of their own (python-can
// expects each handshake reply alone in a read), and a "< stat ... >" each
// statistics interval. It stops when the client is stopped, after a last item,
// or on a write error.
func (c *client) writeLoop() {
	defer close(c.written)
	w := bufio.NewWriter(c.conn)
	var ticker *time.Ticker
	var tick <-chan time.Time
	defer func() {
		if ticker != nil {
			ticker.Stop()
		}
	}()
	flush := func() bool {
		c.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
		if err := w.Flush(); err != nil {
			c.stop()
			return false
		}
		return true
	}
	for {
		select {
		case <-c.done:
			return
		case <-tick:
			w.Write(protocol.AppendStat(nil, c.bus.stats()))
			if !flush() {
				return
			}
		case it := <-c.out:
			for more := true; more; {
				if it.setStats {
					if ticker != nil {
						ticker.Stop()
						ticker, tick = nil, nil
					}
					if it.stats > 0 {
						ticker = time.NewTicker(it.stats)
						tick = ticker.C
					}
				}
				w.Write(it.text)
				if it.reply && !flush() {
					return
				}
				if it.last {
					c.stop()
					return
				}
				select {
				case it = <-c.out:
				default:
					more = false
				}
			}
			if !flush() {
				return
			}
		}
	}
}
