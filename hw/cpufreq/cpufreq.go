// Package cpufreq holds the CPU clock at its highest while cand runs: each
// cpufreq policy's scaling_min_freq raised to its scaling_max_freq, so that the
// governor (ondemand, schedutil) can no longer lower the clock when the CPU idles.
// The values found are recorded in a state file before anything is changed, so
// that a restore puts back exactly what was there, also from another process after
// the holder died (the packaged systemd unit's ExecStopPost=).
//
// The kernel's interface is Documentation/admin-guide/pm/cpufreq.rst, "Policy
// Interface in sysfs": one directory policyN per policy under
// /sys/devices/system/cpu/cpufreq, with scaling_min_freq and scaling_max_freq in
// kHz (read-write; the minimum "must not be higher than" the maximum) and
// affected_cpus, the CPUs it governs.
//
// The maximum held is scaling_max_freq, not cpuinfo_max_freq: it is the highest
// clock the policy allows now, a cap an administrator set included, and the only
// value the kernel's documentation allows scaling_min_freq to take at the top.
package cpufreq

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Where Linux and cand keep things by default.
const (
	// DefaultDir is where the kernel lists its cpufreq policies.
	DefaultDir = "/sys/devices/system/cpu/cpufreq"
	// DefaultState is the state file of a hold: directly in /run, which only root
	// may write (the daemon's user cannot forge what root writes back), and which
	// lives exactly as long as the kernel's limits do (a tmpfs, emptied at boot).
	DefaultState = "/run/cand-cpufreq.state"
)

// The attribute files of a policy that a hold reads or writes.
const (
	minFile  = "scaling_min_freq"
	maxFile  = "scaling_max_freq"
	cpusFile = "affected_cpus"
)

// maxKHz bounds a frequency read from sysfs or a state file: 1 THz, far above any
// CPU, so a garbled value is refused instead of written.
const maxKHz = 1_000_000_000

// ErrNoCpufreq is what Policies returns (wrapped, naming the directory) where the
// kernel offers no cpufreq policies: a kernel built without cpufreq, a container
// without /sys, a host that is not a Raspberry Pi. Not fatal for cand: the clock
// simply is not held.
var ErrNoCpufreq = errors.New("no CPU frequency scaling")

// Policy is one cpufreq policy as found.
type Policy struct {
	Name string // policyN
	// CPUs are the CPUs it governs, as affected_cpus lists them ("0 1 2 3").
	CPUs           string
	MinKHz, MaxKHz uint64 // scaling_min_freq, scaling_max_freq
}

// Sysfs is a cpufreq directory: DefaultDir on a running system, a fake tree in
// tests.
type Sysfs struct {
	Dir string
	// open opens a file for writing: os.OpenFile; tests put a refusal here.
	open func(name string, flag int, perm fs.FileMode) (*os.File, error)
}

// New returns the cpufreq directory dir.
func New(dir string) Sysfs { return Sysfs{Dir: dir, open: os.OpenFile} }

func (s Sysfs) path(policy, file string) string { return filepath.Join(s.Dir, policy, file) }

// Policies lists the policies in the order of their numbers, each with its
// limits now.
func (s Sysfs) Policies() ([]Policy, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("cpufreq: %s does not exist: %w on this kernel (built without cpufreq, a container, or not a Raspberry Pi); the CPU clock is not held", s.Dir, ErrNoCpufreq)
	}
	if err != nil {
		return nil, fmt.Errorf("cpufreq: %w", err)
	}
	var names []string
	for _, e := range entries {
		if policyNumber(e.Name()) >= 0 {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("cpufreq: %s lists no policyN directory: %w on this kernel (no cpufreq driver for this CPU); the CPU clock is not held", s.Dir, ErrNoCpufreq)
	}
	sort.Slice(names, func(i, j int) bool { return policyNumber(names[i]) < policyNumber(names[j]) })
	ps := make([]Policy, 0, len(names))
	for _, n := range names {
		p := Policy{Name: n}
		if p.MinKHz, err = s.readKHz(n, minFile); err != nil {
			return nil, err
		}
		if p.MaxKHz, err = s.readKHz(n, maxFile); err != nil {
			return nil, err
		}
		if cpus, err := os.ReadFile(s.path(n, cpusFile)); err == nil {
			p.CPUs = strings.TrimSpace(string(cpus))
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// policyNumber is N of a name policyN, or -1 for any other name.
func policyNumber(name string) int {
	digits, ok := strings.CutPrefix(name, "policy")
	if !ok || digits == "" || len(digits) > 6 {
		return -1
	}
	n := 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// readKHz reads a frequency attribute of a policy.
func (s Sysfs) readKHz(policy, file string) (uint64, error) {
	p := s.path(policy, file)
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, fmt.Errorf("cpufreq: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n") // sysfs: one value and a newline
	v, err := parseKHz(strings.TrimSpace(line))
	if err != nil {
		return 0, fmt.Errorf("cpufreq: %s: %w", p, err)
	}
	return v, nil
}

// parseKHz reads a frequency in kHz as sysfs writes it: a decimal number.
func parseKHz(s string) (uint64, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v == 0 || v > maxKHz {
		return 0, fmt.Errorf("%q is not a frequency in kHz", s)
	}
	return v, nil
}
