package soc

import "cand/hw/bcm2835"

// fifo is one of SPI0's 64-byte FIFOs. Each entry keeps the time it was written,
// because a byte cannot start on the wire before the driver put it in the TX FIFO.
type fifo struct {
	b    [bcm2835.SPIFIFOSize]byte
	at   [bcm2835.SPIFIFOSize]int64
	head int
	n    int
}

func (f *fifo) full() bool { return f.n == len(f.b) }

func (f *fifo) push(b byte, at int64) {
	i := (f.head + f.n) % len(f.b)
	f.b[i], f.at[i] = b, at
	f.n++
}

func (f *fifo) pop() (byte, int64) {
	b, at := f.b[f.head], f.at[f.head]
	f.head = (f.head + 1) % len(f.b)
	f.n--
	return b, at
}

func (f *fifo) reset() { f.head, f.n = 0, 0 }
