package bridge

import "cand/hw/bcm2835"

// Probe drives optional logic-analyzer pins at the frame path's stage boundaries:
// high while an interrupt is handled, while an SPI transfer runs, and while a
// frame is written to the socket. Each edge is one GPSET/GPCLR
// store (no lock, no syscall). A nil *Probe, or a pin < 0, is off: a compare or two.
type Probe struct {
	GPIO        *bcm2835.GPIO
	Interrupt   int
	SPI         int
	SocketWrite int
}

func (p *Probe) drive(pin int, high bool) {
	if p != nil && pin >= 0 {
		p.GPIO.Write(pin, high)
	}
}

func (p *Probe) interrupt(on bool) {
	if p != nil {
		p.drive(p.Interrupt, on)
	}
}

func (p *Probe) spi(on bool) {
	if p != nil {
		p.drive(p.SPI, on)
	}
}

func (p *Probe) socketWrite(on bool) {
	if p != nil {
		p.drive(p.SocketWrite, on)
	}
}
