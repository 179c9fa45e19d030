package soak

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Resources are the process's resident memory, goroutines and open file
// descriptors at one moment.
type Resources struct {
	RSSKiB     int64 // VmRSS in /proc/self/status
	Goroutines int
	FDs        int // entries of /proc/self/fd
}

func sampleResources() Resources {
	r := Resources{Goroutines: runtime.NumGoroutine(), RSSKiB: -1, FDs: -1}
	if f, err := os.Open("/proc/self/status"); err == nil {
		s := bufio.NewScanner(f)
		for s.Scan() {
			if v, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
				r.RSSKiB, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			}
		}
		f.Close()
	}
	if es, err := os.ReadDir("/proc/self/fd"); err == nil {
		r.FDs = len(es) - 1 // the directory's own descriptor, open while it is read
	}
	return r
}

// Growth limits from start to end.
const (
	rssGrowthMax       = 0.20
	goroutineGrowthMax = 5
	fdGrowthMax        = 2
)

// growthProblems says what grew beyond its limit from start to end.
func growthProblems(start, end Resources) []string {
	var bad []string
	if start.RSSKiB > 0 && float64(end.RSSKiB) > float64(start.RSSKiB)*(1+rssGrowthMax) {
		bad = append(bad, "resident memory grew more than 20 %")
	}
	if end.Goroutines > start.Goroutines+goroutineGrowthMax {
		bad = append(bad, "goroutines grew by more than 5")
	}
	if end.FDs > start.FDs+fdGrowthMax {
		bad = append(bad, "open file descriptors grew by more than 2")
	}
	return bad
}
