package bench

import (
	"fmt"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// StartStress keeps the other core busy with stress-ng (Debian package stress-ng):
// one CPU worker and one I/O (sync) worker, in their own process group. stress-ng
// ends itself after timeout; stop ends it and its workers earlier (SIGTERM to the
// group it leads, then waits).
func StartStress(timeout time.Duration) (stop func(), err error) {
	path, err := exec.LookPath("stress-ng")
	if err != nil {
		return nil, fmt.Errorf("bench: the stress scenario needs stress-ng (apt-get install stress-ng): %w", err)
	}
	cmd := exec.Command(path, "--cpu", "1", "--io", "1", "--timeout", strconv.Itoa(int(timeout.Seconds())+1)+"s", "--quiet")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: starting stress-ng: %w", err)
	}
	pgid := cmd.Process.Pid
	time.Sleep(300 * time.Millisecond) // let the workers start before the window opens
	return func() {
		syscall.Kill(-pgid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-pgid, syscall.SIGKILL)
			<-done
		}
	}, nil
}
