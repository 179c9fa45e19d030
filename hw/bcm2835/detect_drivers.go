package bcm2835

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// sysfs driver directories, relative to the root CheckKernelDrivers is given.
const (
	pathSPIBCM2835 = "sys/bus/platform/drivers/spi-bcm2835"
	pathMCP251x    = "sys/bus/spi/drivers/mcp251x"
)

// KernelDriverError: a kernel driver owns hardware cand is about to drive from
// user space. Two drivers on one controller corrupt each other's transfers.
type KernelDriverError struct {
	Driver string // kernel driver name
	Device string // the bound device's sysfs name
	Fix    string
}

func (e *KernelDriverError) Error() string {
	return fmt.Sprintf("the kernel's %s driver is bound to %s, which cand drives itself "+
		"(two drivers on one controller corrupt each other's transfers): %s",
		e.Driver, e.Device, e.Fix)
}

// CheckKernelDrivers refuses when the kernel's mcp251x driver owns an MCP2515 on
// SPI0, or its spi-bcm2835 driver is bound to the SPI0 block at the board's
// address, looking under root/sys ("" means "/"). Both are reported when both
// are found.
func CheckKernelDrivers(board Board, root string) error {
	if root == "" {
		root = "/"
	}
	var errs []error
	if ents, err := os.ReadDir(filepath.Join(root, pathMCP251x)); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "spi0.") {
				errs = append(errs, &KernelDriverError{
					Driver: "mcp251x",
					Device: e.Name(),
					Fix: "remove dtoverlay=mcp2515-can0 (and any other mcp2515 overlay on SPI0) " +
						"from config.txt and reboot",
				})
				break
			}
		}
	}
	if ents, err := os.ReadDir(filepath.Join(root, pathSPIBCM2835)); err == nil {
		spi0 := uint64(board.PeriBase) + SPI0Offset
		for _, e := range ents {
			if spi0Device(e.Name(), spi0) {
				errs = append(errs, &KernelDriverError{
					Driver: "spi-bcm2835",
					Device: e.Name() + " (SPI0)",
					Fix: "set dtparam=spi=off in config.txt and reboot, or unbind it now with " +
						"'echo " + e.Name() + " > /" + pathSPIBCM2835 + "/unbind' as root",
				})
				break
			}
		}
	}
	return errors.Join(errs...)
}

// spi0Device: a platform device name "<hex address>.spi" names the SPI0 block,
// either by its ARM physical address or by its bus address.
func spi0Device(name string, spi0 uint64) bool {
	addr, kind, ok := strings.Cut(name, ".")
	if !ok || kind != "spi" {
		return false
	}
	a, err := strconv.ParseUint(addr, 16, 64)
	if err != nil {
		return false
	}
	return a == spi0 || a == BusBase+SPI0Offset
}
