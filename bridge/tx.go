package bridge

import (
	"golang.org/x/sys/unix"

	"cand/internal/mono"
	"cand/socketcan"
)

// pumpTX moves frames from the socket to free TX buffers. A frame is read only
// when a buffer can take it, so frames wait in the socket's receive queue (the
// back-pressure) rather than being dropped. The socket is edge-triggered in epoll:
// sockReadable stays set until a read returns EAGAIN.
func (p *Port) pumpTX() error {
	// Off the bus, frames wait in the socket queue until the restart.
	for p.sockReadable && !p.busOff && !p.down && p.Ctl.TxFree() {
		_, err := socketcan.ReadFrame(p.SockFd, &p.txBuf, &p.drops)
		if err == unix.EAGAIN || err == unix.EINTR {
			if err == unix.EAGAIN {
				p.sockReadable = false
			}
			continue
		}
		if err != nil {
			return err
		}
		readNs := mono.Now()
		if p.drops != p.lastDrops {
			// The kernel dropped frames for our receive queue (SO_RXQ_OVFL): the
			// queue (interface.rcvbuf) was too small for the burst.
			p.M.SocketDrops.Add(uint64(p.drops - p.lastDrops))
			p.lastDrops = p.drops
		}
		f, kind := socketcan.Decode(&p.txBuf)
		if !kind.Valid() {
			p.M.TXInvalid.Inc()
			continue
		}
		buf, err := p.Ctl.Transmit(&f)
		if err != nil {
			p.M.TXDropped.Inc()
			return err
		}
		p.txReadNs[buf] = readNs
		p.M.TXBytes.Add(uint64(f.Length))
		p.M.TXSocketToRTS.Observe(mono.Now() - readNs)
	}
	return nil
}
