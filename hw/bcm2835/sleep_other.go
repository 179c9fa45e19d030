//go:build !linux

package bcm2835

import "time"

func threadSleep(d time.Duration) { time.Sleep(d) }
