package cpufreq

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxStateSize bounds the state file read: a line per policy, a few dozen bytes
// each.
const maxStateSize = 64 << 10

// stateHeader opens every state file: what it is and what undoes it.
const stateHeader = `# cand cpufreq hold: each cpufreq policy's scaling_min_freq and scaling_max_freq
# (kHz) before the hold. "cand cpufreq restore" writes scaling_min_freq back and
# removes this file.
`

// writeState records ps in the state file at path, whole or not at all: written
// to path.tmp (created afresh, never through a symbolic link) and renamed over
// path.
func writeState(path string, ps []Policy) error {
	var b bytes.Buffer
	b.WriteString(stateHeader)
	for _, p := range ps {
		fmt.Fprintf(&b, "%s %d %d\n", p.Name, p.MinKHz, p.MaxKHz)
	}
	tmp := path + ".tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cpufreq: state file: %w", err)
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("cpufreq: state file: %w (its directory %s must exist and be writable)", err, filepath.Dir(path))
	}
	_, err = f.Write(b.Bytes())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cpufreq: state file: %w", err)
	}
	return nil
}

// readState reads the state file at path. It refuses a symbolic link, anything
// but a regular file, and a file another user owns: the restore writes what it
// says as this user, so only what this user wrote is taken. An absent file is an
// error for which errors.Is(err, fs.ErrNotExist) holds.
func readState(path string) ([]Policy, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("cpufreq: state file %s is a symbolic link: refused; check the CPU clock limits (cand cpufreq restore writes them back from a state file cand wrote) and remove it", path)
	}
	if err != nil {
		return nil, fmt.Errorf("cpufreq: state file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cpufreq: state file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("cpufreq: state file %s is not a regular file (%s): refused; remove it", path, fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("cpufreq: state file %s belongs to uid %d, not to this user (uid %d), who would write what it says: refused; it was not written by this user's cand cpufreq hold: check the CPU clock limits and remove it", path, st.Uid, os.Geteuid())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxStateSize+1))
	if err != nil {
		return nil, fmt.Errorf("cpufreq: state file: %w", err)
	}
	if len(data) > maxStateSize {
		return nil, fmt.Errorf("cpufreq: state file %s is larger than %d bytes: not cand's; check the CPU clock limits and remove it", path, maxStateSize)
	}
	ps, err := parseState(data)
	if err != nil {
		return nil, fmt.Errorf("cpufreq: state file %s: %w; it is not what cand cpufreq hold writes: check the CPU clock limits and remove it", path, err)
	}
	return ps, nil
}

// parseState reads the lines "policyN MIN_KHZ MAX_KHZ" of a state file; '#'
// starts a comment line.
func parseState(data []byte) ([]Policy, error) {
	var ps []Policy
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 || policyNumber(f[0]) < 0 {
			return nil, fmt.Errorf("line %d: %q is not \"policyN MIN_KHZ MAX_KHZ\"", n, line)
		}
		if seen[f[0]] {
			return nil, fmt.Errorf("line %d: %s twice", n, f[0])
		}
		seen[f[0]] = true
		lo, err := parseKHz(f[1])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		hi, err := parseKHz(f[2])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		ps = append(ps, Policy{Name: f[0], MinKHz: lo, MaxKHz: hi})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, errors.New("no policy in it")
	}
	return ps, nil
}
