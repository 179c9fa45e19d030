package cpufreq

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// Held is a hold in force, made by this process. Its policies' scaling_min_freq
// files stay open for writing until Restore or Close, so that Restore works after
// the process gave up the privileges that opened them (sysfs checks them when a
// file is opened, not when it is written).
type Held struct {
	sys   Sysfs
	state string
	files map[string]*os.File // policy → its scaling_min_freq
	// Found are the policies as the hold found them; each one's
	// scaling_min_freq is now its MaxKHz.
	Found []Policy
	// Saved are the values Restore writes back: Found, or, when Kept, those of
	// the state file already there.
	Saved []Policy
	// Kept: a state file was there already, from a hold that was not restored
	// (its holder died): it holds the values from before that hold, the
	// originals, and was kept, not overwritten with the held values found now.
	Kept bool
}

// Hold raises every policy's scaling_min_freq to its scaling_max_freq, after
// recording the values found in the state file at path (or keeping the one there,
// see Held.Kept). Each file is opened for writing before the state file is
// written, so a refusal (not root, a read-only /sys) changes nothing; the error
// then says what is needed. Where the kernel has no cpufreq,
// errors.Is(err, ErrNoCpufreq).
func (s Sysfs) Hold(state string) (*Held, error) {
	found, err := s.Policies()
	if err != nil {
		return nil, err
	}
	h := &Held{sys: s, state: state, files: map[string]*os.File{}, Found: found}
	for _, p := range found {
		f, err := s.openMin(p.Name)
		if err != nil {
			h.Close()
			return nil, err
		}
		h.files[p.Name] = f
	}
	saved, err := readState(state)
	switch {
	case err == nil:
		h.Kept = true
		h.Saved = merge(saved, found)
		if len(h.Saved) > len(saved) {
			err = writeState(state, h.Saved)
		}
	case errors.Is(err, fs.ErrNotExist):
		h.Saved = found
		err = writeState(state, found)
	}
	if err != nil {
		h.Close()
		return nil, err
	}
	var errs []error
	for _, p := range found {
		if err := write(h.files[p.Name], p.MaxKHz); err != nil {
			errs = append(errs, s.writeErr(p.Name, err))
		}
	}
	if len(errs) > 0 {
		// What was raised goes back down; the state file stays if that fails.
		if err := h.Restore(); err != nil {
			errs = append(errs, err)
		}
		return nil, errors.Join(errs...)
	}
	return h, nil
}

// merge is saved with the policies found that it lacks (a CPU brought online
// since the first hold), at their values now.
func merge(saved, found []Policy) []Policy {
	out := append([]Policy(nil), saved...)
	for _, f := range found {
		in := false
		for _, s := range saved {
			in = in || s.Name == f.Name
		}
		if !in {
			out = append(out, f)
		}
	}
	return out
}

// Restore writes the saved scaling_min_freq of each policy back and removes the
// state file; after a failure the state file stays, for `cand cpufreq restore`.
func (h *Held) Restore() error {
	var errs []error
	for _, p := range h.Saved {
		f := h.files[p.Name]
		if f == nil {
			var err error
			if f, err = h.sys.openMin(p.Name); err != nil {
				errs = append(errs, err)
				continue
			}
			h.files[p.Name] = f
		}
		if err := write(f, p.MinKHz); err != nil {
			errs = append(errs, h.sys.writeErr(p.Name, err))
		}
	}
	h.Close()
	if len(errs) > 0 {
		return fmt.Errorf("%w; the values from before the hold stay in %s for cand cpufreq restore", errors.Join(errs...), h.state)
	}
	if err := os.Remove(h.state); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cpufreq: restored, but the state file stays: %w", err)
	}
	return nil
}

// Close closes the files held open, leaving the hold in force.
func (h *Held) Close() {
	for n, f := range h.files {
		f.Close()
		delete(h.files, n)
	}
}

// Restored is what a Restore from the state file did.
type Restored struct {
	// NoState: there was no state file, so nothing was held (or it was restored
	// already); nothing was written.
	NoState bool
	// Policies are the values written back.
	Policies []Policy
}

// Restore writes back each policy's scaling_min_freq recorded in the state file
// at path and removes the file. Without a state file it does nothing
// (Restored.NoState). A policy that fails is reported and the others are still
// restored; the state file then stays, for another try.
func (s Sysfs) Restore(state string) (Restored, error) {
	saved, err := readState(state)
	if errors.Is(err, fs.ErrNotExist) {
		return Restored{NoState: true}, nil
	}
	if err != nil {
		return Restored{}, err
	}
	var r Restored
	var errs []error
	for _, p := range saved {
		f, err := s.openMin(p.Name)
		if err == nil {
			err = write(f, p.MinKHz)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				err = s.writeErr(p.Name, err)
			}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r.Policies = append(r.Policies, p)
	}
	if len(errs) > 0 {
		return r, fmt.Errorf("%w; the values from before the hold stay in %s: run cand cpufreq restore again once that is fixed", errors.Join(errs...), state)
	}
	if err := os.Remove(state); err != nil {
		return r, fmt.Errorf("cpufreq: restored, but the state file stays: %w", err)
	}
	return r, nil
}

// openMin opens a policy's scaling_min_freq for writing.
func (s Sysfs) openMin(policy string) (*os.File, error) {
	open := s.open
	if open == nil {
		open = os.OpenFile
	}
	p := s.path(policy, minFile)
	f, err := open(p, os.O_WRONLY, 0)
	switch {
	case err == nil:
		return f, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("cpufreq: %w: the policy is gone (its CPUs taken offline?)", err)
	default:
		return nil, accessErr(err)
	}
}

// write writes a frequency in kHz and a newline at the start of a
// scaling_min_freq file, as `echo` would. The file is not truncated: sysfs takes
// each write whole, and readers take the first line.
func write(f *os.File, kHz uint64) error {
	_, err := f.WriteAt([]byte(strconv.FormatUint(kHz, 10)+"\n"), 0)
	return err
}

// writeErr names the file a write failed on and, for a refusal, the cause and the
// fix.
func (s Sysfs) writeErr(policy string, err error) error {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		err = &fs.PathError{Op: "write", Path: s.path(policy, minFile), Err: err}
	}
	return accessErr(err)
}

// accessErr says, for a refused open or write of a cpufreq file, why and what to
// do: the limits are root's, and /sys may be mounted read-only.
func accessErr(err error) error {
	switch {
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("cpufreq: %w: /sys is read-only for this process (systemd's ProtectKernelTunables=, or a container): the packaged unit holds the clock in its ExecStartPre=+ step (cand cpufreq hold), which runs as root outside that sandbox; elsewhere run cand cpufreq hold as root, or set hardware.hold_cpu_clock: false", err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("cpufreq: %w: the CPU clock's limits are root's to change: the packaged unit holds the clock in its ExecStartPre=+ step (cand cpufreq hold), which runs as root; by hand run sudo cand cpufreq hold (and sudo cand cpufreq restore after), run cand as root, or set hardware.hold_cpu_clock: false", err)
	}
	return fmt.Errorf("cpufreq: %w", err)
}
