package clock

import "cand/internal/kernelop"

// Category is why host time was taken out of the board's clock.
type Category int

const (
	// Runqueue: the CPU thread was runnable but not running (its run delay,
	// /proc/self/task/TID/schedstat).
	Runqueue Category = iota
	// Steal: the CPU thread neither ran nor waited on the runqueue nor slept: the
	// hypervisor had its vCPU.
	Steal
	// Park: a Go runtime park of the CPU thread beyond what one costs on the board.
	Park
	// WakeUp: a wake-up of the waiting CPU thread slower than the board's.
	WakeUp
	// BusLate: the bus thread woke late, or told of an INT edge late, while
	// the CPU thread waited.
	BusLate
	// Model: the register model's own host time inside a register access, beyond
	// the board's cost of the access.
	Model
	// Stall: the dedicated rule's removal of a gap in which the CPU thread did not
	// wait for the hardware, whatever filled it.
	Stall
	// KernelOutlier: the strict rule's removal of a system call's CPU time far
	// beyond the median gap's (outlier.go): the hypervisor's.
	KernelOutlier
	// Calibration: the strict rule's calibration bursts on the CPU thread
	// (calib.go): the simulator's own time.
	Calibration
	// HostNoise: the strict rule's removal of running far beyond the median of
	// the same stretch of code (noise.go): the host's interrupts and exits.
	HostNoise
	NumCategories
)

var categoryNames = [NumCategories]string{"runqueue", "steal", "park", "wake_up", "bus_late", "register_model", "stall", "kernel_outlier", "calibration", "host_noise"}

// String is the category's name in metrics and reports.
func (c Category) String() string {
	if c < 0 || c >= NumCategories {
		return "unknown"
	}
	return categoryNames[c]
}

// Removal counts one category's removals: how many, and the host time removed.
type Removal struct {
	Count uint64
	Ns    int64
}

// Stats is what the clock did to the board's time.
type Stats struct {
	Rule Rule
	// Removed is the host time taken out of the board's time, by category.
	Removed [NumCategories]Removal
	// MaxRemovalNs is the longest single removal.
	MaxRemovalNs int64

	// Strict rule only: the board time charged beyond the host time it stands for.
	// ScaledNs is the CPU thread's own running time, its metered system calls
	// apart, times (factor - 1): its code on the board's slower core. ParkNs
	// and WakeNs are the board's cost of the parks and wake-ups charged in place
	// of their host time. SharedCoreNs is the CPU time of the process's other
	// threads charged on a one-core board.
	ScaledNs, ParkNs, WakeNs, SharedCoreNs int64
	// KernelNs is the board time charged beyond host time for the CPU thread's
	// metered system calls (kernel.go): negative where the host is slower at
	// that kernel work than the board. Kernel counts them by kind.
	KernelNs int64
	Kernel   [kernelop.NumOps]KernelCalls
	// ClockReads counts the CPU thread's clock reads charged at the board's cost
	// of a read (clockread.go); ClockReadNs is that charge beyond their host ns.
	ClockReads, ClockReadNs int64
	// Parks and Wakes count the Go runtime parks and the wake-ups charged.
	Parks, Wakes uint64
	// FloorKeptNs is removal the floors refused (Reach, Commit, a model's time).
	FloorKeptNs int64
	// IdleNs is the board time the CPU thread spent waiting for the hardware.
	IdleNs int64
	// ForgivingNs is what the dedicated rule would have removed from the same gaps
	// (an indication: under it the gaps themselves would differ).
	ForgivingNs int64

	// Strict rule with a Kernel (calib.go): the calibration bursts run, and the
	// host's time for one pass of the kernel (ns) and the factor (board ns per
	// host ns) as they moved over the run, after each burst.
	CalibBursts          uint64
	HostKernelNs, Factor Spread
}

// RemovedNs is the total host time removed.
func (s Stats) RemovedNs() int64 {
	var n int64
	for _, r := range s.Removed {
		n += r.Ns
	}
	return n
}

// ChargedNs is the total board time charged beyond host time (strict rule).
func (s Stats) ChargedNs() int64 {
	return s.ScaledNs + s.KernelNs + s.ClockReadNs + s.ParkNs + s.WakeNs + s.SharedCoreNs
}

// add records a removal of ns in category cat (mu held).
func (s *Stats) add(cat Category, ns int64) {
	if ns <= 0 {
		return
	}
	s.Removed[cat].Count++
	s.Removed[cat].Ns += ns
	s.MaxRemovalNs = max(s.MaxRemovalNs, ns)
}
