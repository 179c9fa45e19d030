package gpio

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Line is one requested input line: the kernel's line request fd. It is meant for one
// owner (the owner thread); its methods are not safe for concurrent use with Close.
type Line struct {
	fd     int
	offset uint32
}

// Fd is the request's file descriptor: non-blocking, readable when edge events are
// queued; add it to an epoll set and drain it with ReadEvents.
func (l *Line) Fd() int { return l.fd }

// Offset is the line's offset on its chip (the BCM GPIO number on a Pi's gpiochip0).
func (l *Line) Offset() uint32 { return l.offset }

// Value reads the line's logical level (GPIO_V2_LINE_GET_VALUES_IOCTL): true is high,
// or low when the line was requested ActiveLow. It allocates only on error.
func (l *Line) Value() (bool, error) {
	v, e := l.value()
	if e != 0 {
		return false, fmt.Errorf("gpio: GPIO_V2_LINE_GET_VALUES_IOCTL on GPIO %d: %w", l.offset, e)
	}
	return v, nil
}

func (l *Line) value() (bool, unix.Errno) {
	v := lineValues{Mask: 1} // offsets[0], the only line of the request
	if e := ioctl(l.fd, ioctlLineGetValues, unsafe.Pointer(&v)); e != 0 {
		return false, e
	}
	return v.Bits&1 != 0, 0
}

// ReadEvents reads queued edge events from the line; see the function ReadEvents.
func (l *Line) ReadEvents(buf []byte, ev []Event) (int, error) {
	return ReadEvents(l.fd, buf, ev)
}

// Close releases the line. Closing twice is harmless.
func (l *Line) Close() error {
	if l.fd < 0 {
		return nil
	}
	err := unix.Close(l.fd)
	l.fd = -1
	if err != nil {
		return fmt.Errorf("gpio: releasing GPIO %d: %w", l.offset, err)
	}
	return nil
}
