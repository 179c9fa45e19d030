package daemon

import (
	"errors"
	"log/slog"
	"os"

	"cand/config"
	"cand/hw/cpufreq"
)

// cpuClock is where hardware.hold_cpu_clock acts: the kernel's cpufreq
// directory and the hold's state file, and whether systemd started cand.
type cpuClock struct {
	sys   cpufreq.Sysfs
	state string
	// systemd: cand runs as a systemd service ($INVOCATION_ID, systemd.exec(5)),
	// whose unit may hold the clock in its own steps.
	systemd bool
}

// hostCPUClock is the running system's.
func hostCPUClock() cpuClock {
	return cpuClock{sys: cpufreq.New(cpufreq.DefaultDir), state: cpufreq.DefaultState, systemd: os.Getenv("INVOCATION_ID") != ""}
}

// hold holds the CPU clock for the run on the real backend with
// hardware.hold_cpu_clock, and returns what restores it at the end (nil: nothing
// to restore). Under systemd a state file means the unit's ExecStartPre=+ step
// (cand cpufreq hold) holds it, and its ExecStopPost=+ step restores it, also
// after a crash: cand leaves it to them. Otherwise cand holds it itself, through
// files it keeps open for the restore after it drops its privileges; a crash
// then leaves the clock held until `cand cpufreq restore`. A refusal, or a
// kernel without cpufreq, is logged once: cand runs on with the clock unheld.
func (c cpuClock) hold(h *config.Hardware, log *slog.Logger) func() {
	if h.Backend != config.BackendBCM2835 || !h.HoldCPUClock {
		return nil
	}
	if c.systemd {
		if _, err := os.Lstat(c.state); err == nil {
			log.Info("cpu clock: held at its maximum by the unit's ExecStartPre=+ step (cand cpufreq hold); its ExecStopPost=+ step restores it", "state", c.state)
			return nil
		}
	}
	held, err := c.sys.Hold(c.state)
	switch {
	case errors.Is(err, cpufreq.ErrNoCpufreq): // its message says the clock is not held
		log.Warn("cpu clock: "+err.Error(), "setting", "hardware.hold_cpu_clock")
		return nil
	case err != nil:
		log.Warn("cpu clock: not held: "+err.Error(), "setting", "hardware.hold_cpu_clock")
		return nil
	}
	for _, p := range held.Found {
		log.Info("cpu clock: held at its maximum for this run", "policy", p.Name, "cpus", p.CPUs, "scaling_min_freq_khz", p.MaxKHz, "was_khz", p.MinKHz)
	}
	log.Info("cpu clock: restored when cand stops; a crash leaves it held until cand cpufreq restore", "state", c.state, "kept_earlier_state", held.Kept)
	return func() {
		if err := held.Restore(); err != nil {
			log.Error("cpu clock: " + err.Error())
			return
		}
		log.Info("cpu clock: restored to its governor", "state", c.state)
	}
}
