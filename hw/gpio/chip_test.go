package gpio

import (
	"errors"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestOpenChipErrors(t *testing.T) {
	_, err := OpenChip("/nonexistent/gpiochip0")
	want := "gpio: no GPIO character device at /nonexistent/gpiochip0 (no such file or directory): is this a Raspberry Pi with Linux ≥ 5.10? set hardware.gpio_chip"
	if err == nil || err.Error() != want || !errors.Is(err, unix.ENOENT) {
		t.Errorf("OpenChip(missing) = %v\nwant %s", err, want)
	}
	_, err = OpenChip("/dev/null")
	want = "gpio: /dev/null is not a GPIO character device (GPIO_GET_CHIPINFO_IOCTL: inappropriate ioctl for device): set hardware.gpio_chip to a /dev/gpiochipN"
	if unknownIoctlErrno(t) == unix.ENOSYS {
		want = "gpio: GPIO_GET_CHIPINFO_IOCTL on /dev/null: function not implemented: an emulator (qemu-user) that does not forward GPIO ioctls? run cand natively"
	}
	if err == nil || err.Error() != want {
		t.Errorf("OpenChip(/dev/null) = %v\nwant %s", err, want)
	}
}

func TestChipRejectsMissingLine(t *testing.T) {
	c := &Chip{fd: -1, path: "/dev/gpiochip0", info: ChipInfo{Name: "gpiochip0", Label: "pinctrl-bcm2711", Lines: 58}}
	want := "gpio: GPIO 60 does not exist on /dev/gpiochip0 (pinctrl-bcm2711, 58 lines): check int_gpio and hardware.gpio_chip"
	if _, err := c.RequestLine(60, LineConfig{}); err == nil || err.Error() != want {
		t.Errorf("RequestLine(60) = %v\nwant %s", err, want)
	}
	if _, err := c.LineInfo(58); err == nil || err.Error() != want[:len("gpio: GPIO ")]+"58"+want[len("gpio: GPIO 60"):] {
		t.Errorf("LineInfo(58) = %v", err)
	}
}

func TestDecodeLineInfo(t *testing.T) {
	var li lineInfo
	copy(li.Name[:], "GPIO25")
	copy(li.Consumer[:], "spi0 CS1")
	li.Offset = 25
	li.Flags = uint64(LineFlagUsed | LineFlagInput)
	li.NumAttrs = 1
	li.Attrs[0] = lineAttribute{ID: attrIDDebounce, Data: 10}
	got := decodeLineInfo(&li)
	if got.Name != "GPIO25" || got.Consumer != "spi0 CS1" || got.Offset != 25 || !got.Used() ||
		got.Flags != LineFlagUsed|LineFlagInput || got.Debounce.Microseconds() != 10 {
		t.Errorf("decodeLineInfo = %+v", got)
	}
}

// unknownIoctlErrno is what a GPIO ioctl on a non-GPIO fd returns here: ENOTTY from
// the kernel, ENOSYS under qemu-user, which does not forward ioctls it does not know.
func unknownIoctlErrno(t *testing.T) unix.Errno {
	t.Helper()
	fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var v lineValues
	e := ioctl(fd, ioctlLineGetValues, unsafe.Pointer(&v))
	if e != unix.ENOTTY && e != unix.ENOSYS {
		t.Fatalf("GPIO ioctl on /dev/null: %v, want ENOTTY (or ENOSYS under qemu-user)", e)
	}
	return e
}
