//go:build !linux

package bcm2835

import "errors"

// Map needs Linux.
func Map(board Board, root string) (*Mapping, error) {
	return nil, errors.New("cand's bcm2835 backend maps registers through Linux's /dev/mem; " +
		"use hardware.backend: sim on this system")
}

// Close has nothing to unmap here.
func (m *Mapping) Close() error { return nil }

// MapSystemTimer needs Linux.
func (m *Mapping) MapSystemTimer(board Board, root string) error {
	return errors.New("cand maps the System Timer through Linux's /dev/mem; " +
		"use hardware.clock_source: runtime on this system")
}
