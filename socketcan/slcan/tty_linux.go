package slcan

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// N_SLCAN is the slcan line discipline's number (linux/tty.h).
const N_SLCAN = 17

// TTY is a pseudo-terminal whose slave end carries the N_SLCAN line
// discipline: the kernel made a CAN netdev for it (Netdev), which lives as long
// as the slave stays open with the discipline set (slcan_close unregisters it).
// cand reads the kernel's lines from Master and writes its own there.
type TTY struct {
	Master *os.File // non-blocking, in the Go runtime's poller
	slave  int
	Netdev string // the netdev's name as the kernel gave it (SIOCGIFNAME on the slave)
}

// Attach opens a pseudo-terminal (/dev/ptmx), unlocks it, opens its slave end
// (TIOCGPTPEER), sets the master raw and puts N_SLCAN on the slave. It needs
// CAP_NET_ADMIN (slcan_open) and the slcan module (Linux 6.0 or later for the
// CAN netdev with bitrate and state reporting).
func Attach() (*TTY, error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("slcan: open /dev/ptmx: %w (is devpts mounted?)", err)
	}
	t := &TTY{slave: -1}
	fail := func(err error) (*TTY, error) {
		if t.slave >= 0 {
			unix.Close(t.slave)
		}
		unix.Close(m)
		return nil, err
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		return fail(fmt.Errorf("slcan: unlock the pseudo-terminal (TIOCSPTLCK): %w", err))
	}
	s, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC))
	if errno != 0 {
		return fail(fmt.Errorf("slcan: open the pseudo-terminal's slave (TIOCGPTPEER, Linux 4.13): %w", errno))
	}
	t.slave = int(s)
	if err := makeRaw(m); err != nil {
		return fail(err)
	}
	if err := unix.IoctlSetPointerInt(t.slave, unix.TIOCSETD, N_SLCAN); err != nil {
		return fail(ldiscError(err))
	}
	var name [unix.IFNAMSIZ]byte
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(t.slave), unix.SIOCGIFNAME, uintptr(unsafe.Pointer(&name))); errno != 0 {
		return fail(fmt.Errorf("slcan: the netdev's name (SIOCGIFNAME on the tty): %w", errno))
	}
	t.Netdev = unix.ByteSliceToString(name[:])
	t.Master = os.NewFile(uintptr(m), "/dev/ptmx (slcan "+t.Netdev+")")
	return t, nil
}

// ldiscError names the fix for TIOCSETD's refusals: EPERM without
// CAP_NET_ADMIN (slcan_open), EINVAL when no line discipline 17 is registered
// (tty_ldisc_get: the module is not loaded and could not be).
func ldiscError(err error) error {
	switch {
	case errors.Is(err, unix.EPERM):
		return fmt.Errorf("slcan: set the N_SLCAN line discipline: %w: needs CAP_NET_ADMIN", err)
	case errors.Is(err, unix.EINVAL):
		return fmt.Errorf("slcan: set the N_SLCAN line discipline: %w: the kernel has no slcan line discipline; load it (`modprobe slcan`, CONFIG_CAN_SLCAN, Linux 6.0 or later)", err)
	}
	return fmt.Errorf("slcan: set the N_SLCAN line discipline: %w", err)
}

// makeRaw clears the master's input, output and local processing, so that the
// lines pass byte for byte (a pty master starts raw on Linux; this makes sure).
func makeRaw(fd int) error {
	tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return fmt.Errorf("slcan: read the pseudo-terminal's settings: %w", err)
	}
	tio.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON | unix.IXOFF
	tio.Oflag &^= unix.OPOST
	tio.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	tio.Cflag = tio.Cflag&^(unix.CSIZE|unix.PARENB) | unix.CS8
	tio.Cc[unix.VMIN], tio.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, tio); err != nil {
		return fmt.Errorf("slcan: set the pseudo-terminal raw: %w", err)
	}
	return nil
}

// Close closes the slave, which ends the line discipline and unregisters the
// netdev, then the master.
func (t *TTY) Close() error {
	err := unix.Close(t.slave)
	if cerr := t.Master.Close(); err == nil {
		err = cerr
	}
	return err
}

// OpenPTY is a raw pseudo-terminal without a line discipline: master
// (non-blocking, in the poller) and slave. Benchmarks and tests stand it in for
// the kernel's side where slcan is not available.
func OpenPTY() (master, slave *os.File, err error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("slcan: open /dev/ptmx: %w", err)
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(m)
		return nil, nil, err
	}
	s, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK))
	if errno != 0 {
		unix.Close(m)
		return nil, nil, errno
	}
	for _, fd := range []int{m, int(s)} {
		if err := makeRaw(fd); err != nil {
			unix.Close(m)
			unix.Close(int(s))
			return nil, nil, err
		}
	}
	return os.NewFile(uintptr(m), "/dev/ptmx"), os.NewFile(s, "pty slave"), nil
}
