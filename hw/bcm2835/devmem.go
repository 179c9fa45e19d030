package bcm2835

import (
	"errors"
	"fmt"
	"syscall"
)

// Device paths, relative to the root Map is given.
const (
	pathDevMem     = "dev/mem"     // all physical memory: root or CAP_SYS_RAWIO
	pathDevGPIOMem = "dev/gpiomem" // the GPIO page only, whatever the offset; group gpio
)

// Mapping is the GPIO and SPI0 register blocks mapped into this process, one
// BlockSize view each, ready for NewMMIO, and the System Timer's once
// MapSystemTimer added it. The views stay valid until Close.
type Mapping struct {
	GPIO []byte
	SPI0 []byte
	// SystemTimer is the System Timer block (nil until MapSystemTimer).
	SystemTimer []byte
	// GPIODevice is the device the GPIO block came through: "/dev/gpiomem" or "/dev/mem".
	GPIODevice string

	regions [][]byte // whole mmap'd regions, for Close
}

// BlockSystemTimer names the System Timer block in an AccessError.
const BlockSystemTimer = "System Timer"

// AccessError: mapping a register block failed. Its message names the cause and
// the fix; Err is the errno (errors.Is(err, syscall.EPERM) works).
type AccessError struct {
	Op     string // "open" or "mmap"
	Device string // "/dev/mem" or "/dev/gpiomem"
	Block  string // "SPI0", "GPIO" or "System Timer"
	Addr   uint64 // physical address of the block (0 through /dev/gpiomem)
	Err    error
}

func (e *AccessError) Unwrap() error { return e.Err }

func (e *AccessError) Error() string {
	what := "cannot map " + e.Block
	if e.Addr != 0 {
		what += fmt.Sprintf(" at %#x", e.Addr)
	}
	what += " through " + e.Device + ": "
	return what + explainAccess(e.Op, e.Device, e.Block, e.Err)
}

// explainAccess turns an errno from opening or mapping a memory device into its
// cause and fix. Facts: /dev/mem is root:kmem 0640 and open() also requires
// CAP_SYS_RAWIO (EPERM without it, or under kernel lockdown); with
// CONFIG_IO_STRICT_DEVMEM, mmap of a range a driver has claimed fails with EPERM
// unless the kernel runs with iomem=relaxed; /dev/gpiomem is root:gpio 0660.
func explainAccess(op, device, block string, err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	gpiomem := device == "/"+pathDevGPIOMem
	switch {
	case errno == syscall.ENOENT && gpiomem:
		return "/dev/gpiomem does not exist (not a Raspberry Pi OS kernel)"
	case errno == syscall.ENOENT:
		return "/dev/mem does not exist (a kernel without CONFIG_DEVMEM, or a container " +
			"without the device): pass /dev/mem into the container, or use hardware.backend: sim"
	case errno == syscall.EACCES && gpiomem:
		return "permission denied: run cand as root or in group gpio " +
			"(systemd: SupplementaryGroups=gpio)"
	case errno == syscall.EACCES:
		return "permission denied: " + block + " needs /dev/mem, which is only for root or " +
			"group kmem with CAP_SYS_RAWIO: run cand as root, or as a user in group kmem with " +
			"CAP_SYS_RAWIO (systemd: SupplementaryGroups=kmem, AmbientCapabilities=CAP_SYS_RAWIO, " +
			"CAP_SYS_RAWIO kept in CapabilityBoundingSet, DeviceAllow=/dev/mem rw, no PrivateDevices=yes)"
	case errno == syscall.EPERM && op == "open":
		return "operation not permitted: opening /dev/mem needs CAP_SYS_RAWIO " +
			"(systemd: AmbientCapabilities=CAP_SYS_RAWIO and keep it in CapabilityBoundingSet; " +
			"no PrivateDevices=yes), and a kernel not in lockdown (Secure Boot lockdown forbids /dev/mem)"
	case errno == syscall.EPERM && block == "SPI0":
		return "operation not permitted: this kernel enforces strict /dev/mem " +
			"(CONFIG_IO_STRICT_DEVMEM) and a driver has claimed SPI0, which means the kernel's " +
			"spi-bcm2835 driver is bound to it: set dtparam=spi=off in config.txt and reboot, or " +
			"unbind it through /sys/bus/platform/drivers/spi-bcm2835/unbind; or boot with " +
			"iomem=relaxed on the kernel command line"
	case errno == syscall.EPERM && block == BlockSystemTimer:
		return "operation not permitted: this kernel enforces strict /dev/mem " +
			"(CONFIG_IO_STRICT_DEVMEM) and a driver has claimed the System Timer: boot with " +
			"iomem=relaxed, or read the time through the kernel with hardware.clock_source: runtime"
	case errno == syscall.EPERM:
		return "operation not permitted: this kernel enforces strict /dev/mem " +
			"(CONFIG_IO_STRICT_DEVMEM) and the GPIO driver has claimed the block: use a kernel " +
			"with /dev/gpiomem (Raspberry Pi OS), or boot with iomem=relaxed"
	case errno == syscall.EINVAL && op == "mmap":
		return "invalid argument: the kernel would not map this address (a kernel built " +
			"without 64-bit physical offsets, or a page size cand does not handle)"
	case errno == syscall.ENODEV || errno == syscall.ENXIO:
		return errno.Error() + ": the device driver behind " + device + " is not there"
	case errno == syscall.EBUSY:
		return "device busy: another program holds the device exclusively"
	}
	return op + ": " + errno.Error()
}
