package gpio

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Chip is an open GPIO character device (/dev/gpiochipN). Closing it does not release
// the lines requested through it.
type Chip struct {
	fd   int
	path string
	info ChipInfo
}

// ChipInfo is what the kernel reports about a chip (struct gpiochip_info).
type ChipInfo struct {
	Name  string // kernel name, e.g. "gpiochip0"
	Label string // driver label, e.g. "pinctrl-bcm2711"
	Lines uint32 // number of lines; valid offsets are 0..Lines-1
}

// LineInfo is what the kernel reports about one line (struct gpio_v2_line_info).
type LineInfo struct {
	Name     string // line name from the device tree, e.g. "GPIO25"; may be empty
	Consumer string // label of whoever holds the line; empty if unused or unlabelled
	Offset   uint32
	Flags    LineFlag
	Debounce time.Duration // from the debounce attribute; 0 = none
}

// Used reports whether the line is held by the kernel or another process.
func (i *LineInfo) Used() bool { return i.Flags&LineFlagUsed != 0 }

// OpenChip opens the GPIO character device at path (e.g. /dev/gpiochip0) and reads its
// chip info.
func OpenChip(path string) (*Chip, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		switch {
		case errors.Is(err, unix.ENOENT):
			return nil, fmt.Errorf("gpio: no GPIO character device at %s (%w): is this a Raspberry Pi with Linux ≥ 5.10? set hardware.gpio_chip", path, err)
		case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
			return nil, fmt.Errorf("gpio: cannot open %s (%w): run cand as root or as a member of the gpio group", path, err)
		}
		return nil, fmt.Errorf("gpio: open %s: %w", path, err)
	}
	var ci chipInfo
	if e := ioctl(fd, ioctlGetChipInfo, unsafe.Pointer(&ci)); e != 0 {
		unix.Close(fd)
		if e == unix.ENOTTY || e == unix.EINVAL {
			return nil, fmt.Errorf("gpio: %s is not a GPIO character device (GPIO_GET_CHIPINFO_IOCTL: %w): set hardware.gpio_chip to a /dev/gpiochipN", path, e)
		}
		if e == unix.ENOSYS {
			return nil, fmt.Errorf("gpio: GPIO_GET_CHIPINFO_IOCTL on %s: %w: an emulator (qemu-user) that does not forward GPIO ioctls? run cand natively", path, e)
		}
		return nil, fmt.Errorf("gpio: GPIO_GET_CHIPINFO_IOCTL on %s: %w", path, e)
	}
	return &Chip{fd: fd, path: path, info: ChipInfo{
		Name:  cstring(ci.Name[:]),
		Label: cstring(ci.Label[:]),
		Lines: ci.Lines,
	}}, nil
}

// Info returns the chip info read when the chip was opened.
func (c *Chip) Info() ChipInfo { return c.info }

// Path returns the device path the chip was opened from.
func (c *Chip) Path() string { return c.path }

// LineInfo reads the current state of the line at offset (GPIO_V2_GET_LINEINFO_IOCTL).
func (c *Chip) LineInfo(offset uint32) (LineInfo, error) {
	if offset >= c.info.Lines {
		return LineInfo{}, c.noSuchLine(offset)
	}
	li := lineInfo{Offset: offset}
	if e := ioctl(c.fd, ioctlGetLineInfo, unsafe.Pointer(&li)); e != 0 {
		return LineInfo{}, fmt.Errorf("gpio: GPIO_V2_GET_LINEINFO_IOCTL for GPIO %d on %s: %w", offset, c.path, e)
	}
	return decodeLineInfo(&li), nil
}

func decodeLineInfo(li *lineInfo) LineInfo {
	out := LineInfo{
		Name:     cstring(li.Name[:]),
		Consumer: cstring(li.Consumer[:]),
		Offset:   li.Offset,
		Flags:    LineFlag(li.Flags),
	}
	// Compared as u32: on 32-bit ARM, int(NumAttrs) is negative from 2^31 on.
	n := min(li.NumAttrs, uint32(len(li.Attrs)))
	for _, a := range li.Attrs[:n] {
		if a.ID == attrIDDebounce {
			out.Debounce = time.Duration(uint32(a.Data)) * time.Microsecond
		}
	}
	return out
}

// RequestLine requests the line at offset as an input configured by cfg
// (GPIO_V2_GET_LINE_IOCTL). The returned Line's fd is non-blocking, ready for epoll.
func (c *Chip) RequestLine(offset uint32, cfg LineConfig) (*Line, error) {
	if offset >= c.info.Lines {
		return nil, c.noSuchLine(offset)
	}
	req, err := cfg.request(offset)
	if err != nil {
		return nil, err
	}
	if e := ioctl(c.fd, ioctlGetLine, unsafe.Pointer(&req)); e != 0 {
		return nil, c.requestError(offset, &cfg, e)
	}
	fd := int(req.Fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("gpio: making the request fd of GPIO %d non-blocking: %w", offset, err)
	}
	return &Line{fd: fd, offset: offset}, nil
}

func (c *Chip) requestError(offset uint32, cfg *LineConfig, e unix.Errno) error {
	switch e {
	case unix.EBUSY:
		who := "another user"
		if li, err := c.LineInfo(offset); err == nil && li.Consumer != "" {
			who = fmt.Sprintf("%q", li.Consumer)
		}
		return fmt.Errorf("gpio: GPIO %d is in use by %s (%w): free it (remove the dtoverlay that claims it, e.g. mcp2515-can0, or stop the other program) or set another int_gpio",
			offset, who, e)
	case unix.EINVAL:
		return fmt.Errorf("gpio: the kernel rejected the configuration of GPIO %d (bias %v, edge %v, debounce %v, active-low %v) with %w: GPIO uAPI v2 needs Linux ≥ 5.10",
			offset, cfg.Bias, cfg.Edge, cfg.Debounce, cfg.ActiveLow, e)
	case unix.EOPNOTSUPP:
		return fmt.Errorf("gpio: %s cannot configure GPIO %d as asked (bias %v, debounce %v): %w: use bias as-is or no debounce",
			c.path, offset, cfg.Bias, cfg.Debounce, e)
	}
	return fmt.Errorf("gpio: GPIO_V2_GET_LINE_IOCTL for GPIO %d on %s: %w", offset, c.path, e)
}

func (c *Chip) noSuchLine(offset uint32) error {
	return fmt.Errorf("gpio: GPIO %d does not exist on %s (%s, %d lines): check int_gpio and hardware.gpio_chip",
		offset, c.path, c.info.Label, c.info.Lines)
}

// Close closes the chip's fd. Lines requested from it stay requested until they are
// closed themselves.
func (c *Chip) Close() error {
	if c.fd < 0 {
		return nil
	}
	err := unix.Close(c.fd)
	c.fd = -1
	if err != nil {
		return fmt.Errorf("gpio: close %s: %w", c.path, err)
	}
	return nil
}

// cstring returns the NUL-terminated string at the start of b.
func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
