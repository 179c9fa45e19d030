//go:build race

package rt

// raceEnabled: the race detector maps gigabytes of shadow memory, which mlockall would
// try to lock.
const raceEnabled = true
