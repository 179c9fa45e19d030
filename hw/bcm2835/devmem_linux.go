package bcm2835

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Map maps the board's register blocks from the memory devices under root ("" means
// "/"; tests pass a directory of plain files). It first refuses if a kernel driver
// owns SPI0 or the MCP2515 (CheckKernelDrivers). SPI0 always comes through
// /dev/mem at PeriBase+0x204000: /dev/gpiomem ignores the offset and would hand
// out the GPIO page instead. GPIO comes through /dev/gpiomem (one page at offset
// 0) where it exists, else /dev/mem at PeriBase+0x200000.
func Map(board Board, root string) (*Mapping, error) {
	if root == "" {
		root = "/"
	}
	if want := periBase(board.SoC); want == 0 || board.PeriBase != want {
		return nil, &SignalError{Model: board.Model, Detail: "Map was given a Board that Detect did not return"}
	}
	if err := CheckKernelDrivers(board, root); err != nil {
		return nil, err
	}
	m := &Mapping{}
	spi0 := uint64(board.PeriBase) + SPI0Offset
	r, err := mapBlock(root, pathDevMem, "SPI0", spi0, int64(spi0))
	if err != nil {
		return nil, err
	}
	m.regions = append(m.regions, r.region)
	m.SPI0 = r.view

	r, err = mapBlock(root, pathDevGPIOMem, "GPIO", 0, 0)
	m.GPIODevice = "/" + pathDevGPIOMem
	if err != nil {
		// /dev/mem already worked for SPI0, so it is worth a try for GPIO too;
		// under strict devmem the GPIO driver's claim makes it fail, and then the
		// /dev/gpiomem error (when the device exists) is the one to fix.
		gpio := uint64(board.PeriBase) + GPIOOffset
		r2, err2 := mapBlock(root, pathDevMem, "GPIO", gpio, int64(gpio))
		switch {
		case err2 == nil:
			r, err, m.GPIODevice = r2, nil, "/"+pathDevMem
		case errors.Is(err, unix.ENOENT):
			err = err2
		default:
			err = errors.Join(err, err2)
		}
	}
	if err != nil {
		m.Close()
		return nil, err
	}
	m.regions = append(m.regions, r.region)
	m.GPIO = r.view
	return m, nil
}

// MapSystemTimer adds the System Timer block to the mapping: through /dev/mem
// at PeriBase+0x3000, like SPI0 (/dev/gpiomem reaches only the GPIO page). The
// kernel's bcm2835_timer driver maps the block without claiming it
// (of_iomap), so strict /dev/mem lets it through. Close unmaps it with the
// others. Mapping it twice is an error.
func (m *Mapping) MapSystemTimer(board Board, root string) error {
	if root == "" {
		root = "/"
	}
	if want := periBase(board.SoC); want == 0 || board.PeriBase != want {
		return &SignalError{Model: board.Model, Detail: "MapSystemTimer was given a Board that Detect did not return"}
	}
	if m.SystemTimer != nil {
		return errors.New("bcm2835: the System Timer is mapped already")
	}
	addr := uint64(board.PeriBase) + SystemTimerOffset
	r, err := mapBlock(root, pathDevMem, BlockSystemTimer, addr, int64(addr))
	if err != nil {
		return err
	}
	m.regions = append(m.regions, r.region)
	m.SystemTimer = r.view
	return nil
}

type mapped struct {
	region []byte // what mmap returned (whole pages)
	view   []byte // the BlockSize bytes of the block
}

// mapBlock maps BlockSize bytes at physical offset off of the device, with whole
// pages around it (pages may be larger than a block on some arm64 kernels).
func mapBlock(root, dev, block string, addr uint64, off int64) (mapped, error) {
	fail := func(op string, err error) (mapped, error) {
		return mapped{}, &AccessError{Op: op, Device: "/" + dev, Block: block, Addr: addr, Err: err}
	}
	f, err := os.OpenFile(filepath.Join(root, dev), os.O_RDWR|os.O_SYNC|unix.O_CLOEXEC, 0)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fail("open", err)
	}
	defer f.Close() // the mapping outlives the descriptor

	page := int64(os.Getpagesize())
	start := off &^ (page - 1)
	skip := off - start
	length := (skip + BlockSize + page - 1) &^ (page - 1)
	region, err := unix.Mmap(int(f.Fd()), start, int(length), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fail("mmap", err)
	}
	return mapped{region: region, view: region[skip : skip+BlockSize : skip+BlockSize]}, nil
}

// Close unmaps every block; the views (and any MMIO over them) must not be used
// afterwards. Closing twice is harmless.
func (m *Mapping) Close() error {
	var errs []error
	for _, r := range m.regions {
		if err := unix.Munmap(r); err != nil {
			errs = append(errs, err)
		}
	}
	m.regions, m.GPIO, m.SPI0, m.SystemTimer = nil, nil, nil, nil
	return errors.Join(errs...)
}
