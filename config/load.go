package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"syscall"

	"cand/hw/pinout"
)

// MaxFileSize is the largest configuration file Load and Parse accept. A cand
// configuration is a few KiB; the limit keeps a wrong path (a log, a disk image,
// /dev/zero behind a symbolic link) from filling the memory.
const MaxFileSize = 1 << 20

// tooLarge is the message for a file beyond MaxFileSize.
var tooLarge = fmt.Sprintf("file larger than %d MiB: a cand configuration is a few KiB; give the path of the right file with -config", MaxFileSize>>20)

// fileError is a configuration file that cannot be read. Its text names the path,
// the cause and the fix; Unwrap returns the system's error, if there was one.
type fileError struct {
	msg string
	err error
}

func (e *fileError) Error() string { return e.msg }
func (e *fileError) Unwrap() error { return e.err }

// Load reads and checks the configuration file at path. See Parse.
//
// Only a regular file (or a symbolic link to one) of at most MaxFileSize bytes is
// read. Anything else is refused after a stat, before it is opened: opening a FIFO
// for reading waits for a writer, and reading a device such as /dev/zero never ends.
func Load(path string) (*Config, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

func readFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, openError(path, err)
	}
	if err := checkFile(path, fi); err != nil {
		return nil, err
	}
	// O_NONBLOCK: should the path be swapped for a FIFO after the stat, the open
	// returns at once and the check of what was opened refuses it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, openError(path, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, openError(path, err)
	}
	if err := checkFile(path, fi); err != nil {
		return nil, err
	}
	return readLimited(path, f)
}

// readLimited reads r to its end, but no more than one byte beyond MaxFileSize: a
// file that grows while it is read, or one whose size stat does not know (under
// /proc), is caught as well.
func readLimited(path string, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, openError(path, err)
	}
	if len(data) > MaxFileSize {
		return nil, &fileError{msg: path + ": " + tooLarge}
	}
	return data, nil
}

// checkFile refuses what is not a regular file, each kind with its own message,
// and a regular file beyond MaxFileSize.
func checkFile(path string, fi fs.FileInfo) error {
	const fix = "not a file: give the path of a YAML file"
	m := fi.Mode()
	var what string
	switch {
	case m.IsRegular():
		if fi.Size() > MaxFileSize {
			return &fileError{msg: path + ": " + tooLarge}
		}
		return nil
	case m.IsDir():
		return &fileError{msg: fmt.Sprintf("%s is a directory, %s, e.g. %s", path, fix, filepath.Join(path, "cand.yaml"))}
	case m&fs.ModeNamedPipe != 0:
		what = "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeCharDevice != 0:
		what = "a character device"
	case m&fs.ModeDevice != 0:
		what = "a block device"
	default:
		what = "not a regular file and"
	}
	return &fileError{msg: fmt.Sprintf("%s is %s, %s", path, what, fix)}
}

// openError words a failed stat, open or read of the file at path by its cause.
func openError(path string, err error) error {
	var errno syscall.Errno
	errors.As(err, &errno)
	var msg string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		msg = fmt.Sprintf("no such file: %s: create it from deploy/cand.yaml or give -config PATH", path)
	case errors.Is(err, fs.ErrPermission):
		msg = fmt.Sprintf("cannot read %s: permission denied: run as root or make it readable by the cand user", path)
	case errno == syscall.ENOTDIR:
		msg = fmt.Sprintf("cannot read %s: a part of the path before the file name is not a directory: give the path of a YAML file", path)
	case errno == syscall.ELOOP:
		msg = fmt.Sprintf("cannot read %s: too many levels of symbolic links: give the path of a YAML file", path)
	case errno != 0:
		msg = fmt.Sprintf("cannot read %s: %v", path, errno)
	default:
		msg = fmt.Sprintf("cannot read %s: %v", path, err)
	}
	return &fileError{msg: msg, err: err}
}

// maxControllers is how many MCP2515s SPI0 can address: each needs a chip select
// of its own, and any GPIO but SPI0's data pins can be one.
func maxControllers() int {
	n := 0
	for g := 0; g <= pinout.MaxGPIO; g++ {
		if !pinout.IsSPI0DataPin(g) {
			n++
		}
	}
	return n
}

// Parse decodes data strictly, fills in the defaults documented on the schema and
// validates the result, including that a bit timing exists for each controller.
// name is the file name the messages start with. On failure the error is an
// *Errors listing every problem found (up to MaxProblems), one per line, sorted by
// line: "name:line:col: key.path: what is wrong; what is allowed".
// Problems that do not stop cand are returned in Config.Warnings.
//
// data holds one YAML document of at most MaxFileSize bytes; a second document is
// an error, not ignored.
func Parse(name string, data []byte) (*Config, error) {
	ps := &problems{file: name}
	if len(data) > MaxFileSize {
		ps.errs = append(ps.errs, Problem{File: name, Message: tooLarge})
		return nil, ps.result()
	}
	root, problem := readYAML(name, data)
	if problem != nil {
		ps.errs = append(ps.errs, *problem)
		return nil, ps.result()
	}
	d := newDecoder(ps)
	d.at[""] = pos{1, 1}
	var c Config
	d.decode(root, reflect.ValueOf(&c).Elem(), "")
	if d.budget < 0 {
		return nil, ps.result() // what was not decoded would be reported missing
	}
	if n, most := len(c.Controllers), maxControllers(); n > most {
		checker{d}.fail("controllers", "%d controllers given; SPI0 can address at most %d, one per chip select (any GPIO but the data pins: %s)", n, most, pinout.SPI0DataPins())
		return nil, ps.result() // checking each would only repeat clashes
	}
	applyDefaults(&c, d)
	validate(&c, d)
	if err := ps.result(); err != nil {
		return nil, err
	}
	c.Warnings = ps.warningLines()
	return &c, nil
}
