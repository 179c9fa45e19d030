package bcm2835

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// sysfs entries of a bound driver are symlinks to the device; a directory entry
// with the same name is all CheckKernelDrivers looks at.
func sysEntry(t *testing.T, root, dir, name string) {
	t.Helper()
	p := filepath.Join(root, dir)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../../devices/platform/soc/"+name, filepath.Join(p, name)); err != nil {
		t.Fatal(err)
	}
	// the driver directory also holds bind/unbind/uevent files
	for _, f := range []string{"bind", "unbind", "uevent"} {
		_ = os.WriteFile(filepath.Join(p, f), nil, 0o200)
	}
}

func detected(t *testing.T, fix fixture) (Board, string) {
	t.Helper()
	root := fix.write(t)
	b, err := Detect(root)
	if err != nil {
		t.Fatal(err)
	}
	return b, root
}

const (
	msgMCP251x = "the kernel's mcp251x driver is bound to spi0.0, which cand drives itself (two drivers on " +
		"one controller corrupt each other's transfers): remove dtoverlay=mcp2515-can0 (and any other " +
		"mcp2515 overlay on SPI0) from config.txt and reboot"
	msgSPIPi3 = "the kernel's spi-bcm2835 driver is bound to 3f204000.spi (SPI0), which cand drives itself " +
		"(two drivers on one controller corrupt each other's transfers): set dtparam=spi=off in config.txt " +
		"and reboot, or unbind it now with 'echo 3f204000.spi > /sys/bus/platform/drivers/spi-bcm2835/unbind' as root"
)

func TestCheckKernelDrivers(t *testing.T) {
	t.Run("nothing bound", func(t *testing.T) {
		b, root := detected(t, fixPi3)
		if err := CheckKernelDrivers(b, root); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("spi-bcm2835 on SPI0", func(t *testing.T) {
		b, root := detected(t, fixPi3)
		sysEntry(t, root, pathSPIBCM2835, "3f204000.spi")
		err := CheckKernelDrivers(b, root)
		var e *KernelDriverError
		if err == nil || err.Error() != msgSPIPi3 || !errors.As(err, &e) || e.Driver != "spi-bcm2835" {
			t.Fatalf("error\n%v\nwant\n%s", err, msgSPIPi3)
		}
	})
	t.Run("spi-bcm2835 on SPI3..6 of a Pi 4 only", func(t *testing.T) {
		b, root := detected(t, fixPi4)
		sysEntry(t, root, pathSPIBCM2835, "fe204600.spi")
		sysEntry(t, root, pathSPIBCM2835, "fe204800.spi")
		if err := CheckKernelDrivers(b, root); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("spi-bcm2835 on a Pi 4's SPI0", func(t *testing.T) {
		b, root := detected(t, fixPi4)
		sysEntry(t, root, pathSPIBCM2835, "fe204600.spi")
		sysEntry(t, root, pathSPIBCM2835, "fe204000.spi")
		want := "the kernel's spi-bcm2835 driver is bound to fe204000.spi (SPI0), which cand drives itself " +
			"(two drivers on one controller corrupt each other's transfers): set dtparam=spi=off in config.txt " +
			"and reboot, or unbind it now with 'echo fe204000.spi > /sys/bus/platform/drivers/spi-bcm2835/unbind' as root"
		if err := CheckKernelDrivers(b, root); err == nil || err.Error() != want {
			t.Fatalf("error\n%v\nwant\n%s", err, want)
		}
	})
	t.Run("device named by its bus address", func(t *testing.T) {
		b, root := detected(t, fixPiZero)
		sysEntry(t, root, pathSPIBCM2835, "7e204000.spi")
		if err := CheckKernelDrivers(b, root); err == nil {
			t.Fatal("accepted 7e204000.spi")
		}
	})
	t.Run("mcp251x and spi-bcm2835", func(t *testing.T) {
		b, root := detected(t, fixPi3)
		sysEntry(t, root, pathSPIBCM2835, "3f204000.spi")
		sysEntry(t, root, pathMCP251x, "spi0.0")
		err := CheckKernelDrivers(b, root)
		if err == nil || err.Error() != msgMCP251x+"\n"+msgSPIPi3 {
			t.Fatalf("error\n%v\nwant\n%s\n%s", err, msgMCP251x, msgSPIPi3)
		}
	})
	t.Run("mcp251x on another bus", func(t *testing.T) {
		b, root := detected(t, fixPi4)
		sysEntry(t, root, pathMCP251x, "spi1.0")
		if err := CheckKernelDrivers(b, root); err != nil {
			t.Fatal(err)
		}
	})
}

// fakeDevices makes dev/mem a sparse file reaching past the board's SPI0 block,
// with a marker word at the start of the GPIO and SPI0 blocks, and (if gpiomem)
// dev/gpiomem as one page with its own marker.
func fakeDevices(t *testing.T, root string, b Board, gpiomem bool) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(root, pathDevMem))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(int64(b.PeriBase) + SPI0Offset + BlockSize); err != nil {
		t.Fatal(err)
	}
	word := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	if _, err := f.WriteAt(word(0x6770696f), int64(b.PeriBase)+GPIOOffset); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(word(0x00041000), int64(b.PeriBase)+SPI0Offset); err != nil {
		t.Fatal(err)
	}
	if gpiomem {
		page := make([]byte, BlockSize)
		copy(page, word(0x11112222))
		if err := os.WriteFile(filepath.Join(root, pathDevGPIOMem), page, 0o660); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMap(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fix     fixture
		gpiomem bool
	}{
		{"Pi Zero, /dev/mem only", fixPiZero, false},
		{"Pi 2 with /dev/gpiomem", fixPi2, true},
		{"Pi 3 with /dev/gpiomem", fixPi3, true},
		{"Pi 4 with /dev/gpiomem", fixPi4, true},
		{"Pi 4, /dev/mem only", fixPi4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, root := detected(t, tc.fix)
			fakeDevices(t, root, b, tc.gpiomem)
			m, err := Map(b, root)
			if err != nil {
				t.Fatal(err)
			}
			if len(m.SPI0) != BlockSize || len(m.GPIO) != BlockSize {
				t.Fatalf("views are %d and %d bytes, want %d", len(m.SPI0), len(m.GPIO), BlockSize)
			}
			spi, err := NewMMIO[SPIReg](m.SPI0)
			if err != nil {
				t.Fatal(err)
			}
			gpio, err := NewMMIO[GPIOReg](m.GPIO)
			if err != nil {
				t.Fatal(err)
			}
			if got := spi.Load(SPICS); got != 0x00041000 {
				t.Errorf("SPI0 CS = %#x, want the marker 0x41000", got)
			}
			wantGPIO, wantDev := uint32(0x6770696f), "/dev/mem"
			if tc.gpiomem {
				wantGPIO, wantDev = 0x11112222, "/dev/gpiomem"
			}
			if got := gpio.Load(GPFSEL0); got != wantGPIO || m.GPIODevice != wantDev {
				t.Errorf("GPIO word 0 = %#x through %s, want %#x through %s", got, m.GPIODevice, wantGPIO, wantDev)
			}

			// MAP_SHARED: a store reaches the device (here: the file).
			spi.Store(SPICLK, 0x0000002A)
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			if err := m.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			f, err := os.Open(filepath.Join(root, pathDevMem))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, 4)
			if _, err := f.ReadAt(buf, int64(b.PeriBase)+SPI0Offset+int64(SPICLK)); err != nil {
				t.Fatal(err)
			}
			if got := binary.LittleEndian.Uint32(buf); got != 0x2A {
				t.Errorf("CLK in the device = %#x after the store, want 0x2a", got)
			}
		})
	}
}

func TestMapRefusals(t *testing.T) {
	t.Run("no /dev/mem", func(t *testing.T) {
		b, root := detected(t, fixPi3)
		_, err := Map(b, root)
		want := "cannot map SPI0 at 0x3f204000 through /dev/mem: /dev/mem does not exist (a kernel without " +
			"CONFIG_DEVMEM, or a container without the device): pass /dev/mem into the container, or use " +
			"hardware.backend: sim"
		if err == nil || err.Error() != want || !errors.Is(err, syscall.ENOENT) {
			t.Fatalf("error\n%v\nwant\n%s", err, want)
		}
	})
	t.Run("spi-bcm2835 bound: refused before mapping", func(t *testing.T) {
		b, root := detected(t, fixPi3)
		fakeDevices(t, root, b, true)
		sysEntry(t, root, pathSPIBCM2835, "3f204000.spi")
		if _, err := Map(b, root); err == nil || err.Error() != msgSPIPi3 {
			t.Fatalf("error\n%v\nwant\n%s", err, msgSPIPi3)
		}
	})
	t.Run("mcp251x bound", func(t *testing.T) {
		b, root := detected(t, fixPi3)
		fakeDevices(t, root, b, true)
		sysEntry(t, root, pathMCP251x, "spi0.0")
		if _, err := Map(b, root); err == nil || err.Error() != msgMCP251x {
			t.Fatalf("error\n%v\nwant\n%s", err, msgMCP251x)
		}
	})
	t.Run("/dev/gpiomem unusable: GPIO through /dev/mem", func(t *testing.T) {
		b, root := detected(t, fixPi4)
		fakeDevices(t, root, b, false)
		if err := os.Mkdir(filepath.Join(root, pathDevGPIOMem), 0o755); err != nil { // open(O_RDWR) → EISDIR
			t.Fatal(err)
		}
		m, err := Map(b, root)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if m.GPIODevice != "/dev/mem" || binary.LittleEndian.Uint32(m.GPIO) != 0x6770696f {
			t.Errorf("GPIO through %s reads %#x", m.GPIODevice, binary.LittleEndian.Uint32(m.GPIO))
		}
	})
	t.Run("a Board Detect did not return", func(t *testing.T) {
		_, err := Map(Board{Model: "Raspberry Pi 3 Model B Rev 1.2", SoC: SoCBCM2837}, t.TempDir())
		want := "Raspberry Pi 3 Model B Rev 1.2: Map was given a Board that Detect did not return; refusing to " +
			"map registers at a guessed address (use hardware.backend: sim, and report the board with the " +
			"contents of /proc/device-tree/compatible, /proc/device-tree/soc/ranges and the Revision line of /proc/cpuinfo)"
		if err == nil || err.Error() != want {
			t.Fatalf("error\n%v\nwant\n%s", err, want)
		}
	})
}

// Errno → message. Permission failures cannot be produced on a file as root, so the
// explanation is tested directly, one errno at a time.
func TestAccessErrorMessages(t *testing.T) {
	tests := []struct {
		e    AccessError
		want string
	}{
		{AccessError{"open", "/dev/mem", "SPI0", 0x3F204000, syscall.EACCES},
			"cannot map SPI0 at 0x3f204000 through /dev/mem: permission denied: SPI0 needs /dev/mem, which is " +
				"only for root or group kmem with CAP_SYS_RAWIO: run cand as root, or as a user in group kmem with " +
				"CAP_SYS_RAWIO (systemd: SupplementaryGroups=kmem, AmbientCapabilities=CAP_SYS_RAWIO, CAP_SYS_RAWIO " +
				"kept in CapabilityBoundingSet, DeviceAllow=/dev/mem rw, no PrivateDevices=yes)"},
		{AccessError{"open", "/dev/mem", "SPI0", 0xFE204000, syscall.EPERM},
			"cannot map SPI0 at 0xfe204000 through /dev/mem: operation not permitted: opening /dev/mem needs " +
				"CAP_SYS_RAWIO (systemd: AmbientCapabilities=CAP_SYS_RAWIO and keep it in CapabilityBoundingSet; " +
				"no PrivateDevices=yes), and a kernel not in lockdown (Secure Boot lockdown forbids /dev/mem)"},
		{AccessError{"mmap", "/dev/mem", "SPI0", 0x3F204000, syscall.EPERM},
			"cannot map SPI0 at 0x3f204000 through /dev/mem: operation not permitted: this kernel enforces " +
				"strict /dev/mem (CONFIG_IO_STRICT_DEVMEM) and a driver has claimed SPI0, which means the kernel's " +
				"spi-bcm2835 driver is bound to it: set dtparam=spi=off in config.txt and reboot, or unbind it " +
				"through /sys/bus/platform/drivers/spi-bcm2835/unbind; or boot with iomem=relaxed on the kernel command line"},
		{AccessError{"mmap", "/dev/mem", "GPIO", 0x20200000, syscall.EPERM},
			"cannot map GPIO at 0x20200000 through /dev/mem: operation not permitted: this kernel enforces " +
				"strict /dev/mem (CONFIG_IO_STRICT_DEVMEM) and the GPIO driver has claimed the block: use a " +
				"kernel with /dev/gpiomem (Raspberry Pi OS), or boot with iomem=relaxed"},
		{AccessError{"open", "/dev/mem", "SPI0", 0x20204000, syscall.ENOENT},
			"cannot map SPI0 at 0x20204000 through /dev/mem: /dev/mem does not exist (a kernel without " +
				"CONFIG_DEVMEM, or a container without the device): pass /dev/mem into the container, or use " +
				"hardware.backend: sim"},
		{AccessError{"open", "/dev/gpiomem", "GPIO", 0, syscall.EACCES},
			"cannot map GPIO through /dev/gpiomem: permission denied: run cand as root or in group gpio " +
				"(systemd: SupplementaryGroups=gpio)"},
		{AccessError{"open", "/dev/gpiomem", "GPIO", 0, syscall.ENOENT},
			"cannot map GPIO through /dev/gpiomem: /dev/gpiomem does not exist (not a Raspberry Pi OS kernel)"},
		{AccessError{"mmap", "/dev/mem", "SPI0", 0xFE204000, syscall.EINVAL},
			"cannot map SPI0 at 0xfe204000 through /dev/mem: invalid argument: the kernel would not map this " +
				"address (a kernel built without 64-bit physical offsets, or a page size cand does not handle)"},
		{AccessError{"open", "/dev/mem", "SPI0", 0x3F204000, syscall.ENXIO},
			"cannot map SPI0 at 0x3f204000 through /dev/mem: no such device or address: the device driver " +
				"behind /dev/mem is not there"},
		{AccessError{"open", "/dev/gpiomem", "GPIO", 0, syscall.ENODEV},
			"cannot map GPIO through /dev/gpiomem: no such device: the device driver behind /dev/gpiomem is not there"},
		{AccessError{"open", "/dev/mem", "SPI0", 0x3F204000, syscall.EBUSY},
			"cannot map SPI0 at 0x3f204000 through /dev/mem: device busy: another program holds the device exclusively"},
		{AccessError{"mmap", "/dev/mem", "SPI0", 0x3F204000, syscall.ENOMEM},
			"cannot map SPI0 at 0x3f204000 through /dev/mem: mmap: cannot allocate memory"},
		{AccessError{"open", "/dev/mem", "SPI0", 0x3F204000, errors.New("something else")},
			"cannot map SPI0 at 0x3f204000 through /dev/mem: something else"},
	}
	for _, tc := range tests {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%s %s %v:\n%s\nwant\n%s", tc.e.Op, tc.e.Device, tc.e.Err, got, tc.want)
		}
	}
}
