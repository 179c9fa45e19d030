package clock

// clockReads takes the CPU thread's clock reads since the last charge out of
// run, the host ns of a gap's running: each read's host time (ClockReadHostNs)
// leaves the running the factor scales, and the board's cost of a read
// (ClockReadBoardNs) is charged instead. A host's clock read and a board's do
// not scale like user code: a virtual machine's kvm-clock read and a Cortex-A's
// vDSO read of its architected counter are different work, and a Pi 1 or Zero
// makes a system call. Without a board cost the reads stay running.
func (c *Clock) clockReads(run int64) (rest, board int64) {
	n := c.acct.reads.Swap(0)
	b := c.cpu.readBoard.Load()
	if n <= 0 || b <= 0 {
		return run, 0
	}
	host := min(n*c.cpu.readHost.Load(), run)
	c.acct.readsN.Add(n)
	c.acct.readNs.Add(n*b - host)
	return run - host, n * b
}
