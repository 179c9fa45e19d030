package socketcan

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// canSocketError explains why socket(AF_CAN, SOCK_RAW, CAN_RAW) failed.
func canSocketError(err error) error {
	switch {
	case errors.Is(err, unix.EAFNOSUPPORT):
		return fmt.Errorf("socketcan: the kernel has no AF_CAN (%w): run `modprobe can` and `modprobe can-raw`, or use a kernel with CONFIG_CAN and CONFIG_CAN_RAW", err)
	case errors.Is(err, unix.EPROTONOSUPPORT):
		return fmt.Errorf("socketcan: the kernel has no CAN_RAW protocol (%w): run `modprobe can-raw`, or use a kernel with CONFIG_CAN_RAW", err)
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return fmt.Errorf("socketcan: not allowed to open a CAN socket (%w): check seccomp/RestrictAddressFamilies= allows AF_CAN", err)
	}
	return fmt.Errorf("socketcan: socket(AF_CAN, SOCK_RAW, CAN_RAW): %w", err)
}

// linkError explains a failed rtnetlink request on link name; op says what
// was asked ("create vcan link", "set MTU 16", ...), ext is the kernel's
// extended-ack message if any.
func linkError(op, name string, kind Kind, err error, ext string) error {
	detail := ""
	if ext != "" {
		detail = " (kernel: " + ext + ")"
	}
	switch {
	case errors.Is(err, unix.EPERM):
		return fmt.Errorf("socketcan: %s %s: %w%s: needs CAP_NET_ADMIN; run as root or add AmbientCapabilities=CAP_NET_ADMIN", op, name, err, detail)
	case errors.Is(err, unix.EOPNOTSUPP) && (kind == KindVCAN || kind == KindVXCAN):
		return fmt.Errorf("socketcan: %s %s: %w%s: the kernel does not know link type %q; run `modprobe %s` (and list it in /etc/modules-load.d), or use a kernel with %s",
			op, name, err, detail, kind, kind, kind.kconfig())
	case errors.Is(err, unix.EOPNOTSUPP):
		return fmt.Errorf("socketcan: %s %s: %w%s: the kernel does not support link type %q; load its module", op, name, err, detail, kind)
	case errors.Is(err, unix.EBUSY):
		return fmt.Errorf("socketcan: %s %s: %w%s: the MTU of a CAN link can only change while it is down; run `ip link set %s down` and retry", op, name, err, detail, name)
	case errors.Is(err, unix.EEXIST):
		return fmt.Errorf("socketcan: %s %s: %w%s: a link of that name appeared meanwhile, or the vxcan peer name is taken; pick another name or delete it", op, name, err, detail)
	case errors.Is(err, unix.ENODEV):
		return fmt.Errorf("socketcan: %s %s: %w%s: no such interface; create it with EnsureLink", op, name, err, detail)
	}
	return fmt.Errorf("socketcan: %s %s: %w%s", op, name, err, detail)
}
