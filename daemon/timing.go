package daemon

import (
	"fmt"

	"cand/config"
	"cand/internal/rt"
	"cand/mcp2515"
)

// Timing is the bit timing a controller will program: computed like the kernel's
// can_calc_bittiming, or taken from explicit CNF bytes or segments.
func Timing(cc *config.Controller) (mcp2515.BitTiming, error) { return cc.BitTiming() }

// CheckConfig returns, per controller, the timing it would program in the words
// of `ip -details link show`, followed by the CNF bytes, on one line.
func CheckConfig(cfg *config.Config) ([]string, error) {
	var lines []string
	for i := range cfg.Controllers {
		cc := &cfg.Controllers[i]
		bt, err := Timing(cc)
		if err != nil {
			return nil, fmt.Errorf("controller %s: %w", cc.Name, err)
		}
		lines = append(lines, fmt.Sprintf("%s (%s): %s", cc.Name, cc.Interface.Name, bt.String()))
	}
	return lines, nil
}

func controllerConfig(cc *config.Controller, bt mcp2515.BitTiming) mcp2515.Config {
	c := mcp2515.Config{CNF1: bt.CNF1, CNF2: bt.CNF2, CNF3: bt.CNF3, OneShot: cc.OneShot, Bitrate: bt.Bitrate}
	switch cc.Mode {
	case config.ModeListenOnly:
		c.Mode = mcp2515.ModeListenOnly
	case config.ModeLoopback:
		c.Mode = mcp2515.ModeLoopback
	default:
		c.Mode = mcp2515.ModeNormal
	}
	if f := cc.Filters; f != nil {
		mf := &mcp2515.Filters{Rollover: f.Rollover == nil || *f.Rollover, NFilters: len(f.Filters)}
		mf.Mask[0] = mcp2515.FilterID{ID: f.Mask0.ID, Extended: f.Mask0.Extended}
		mf.Mask[1] = mcp2515.FilterID{ID: f.Mask1.ID, Extended: f.Mask1.Extended}
		for i := range mf.Filter {
			// Unused filters repeat an existing one of the same buffer, so they
			// accept nothing the configured ones would not.
			src := i
			if src >= len(f.Filters) {
				src = 0
				if i >= 2 && len(f.Filters) > 2 {
					src = 2
				}
			}
			if src < len(f.Filters) {
				mf.Filter[i] = mcp2515.FilterID{ID: f.Filters[src].ID, Extended: f.Filters[src].Extended}
			}
		}
		c.Filters = mf
	}
	return c
}

func rtConfig(cfg *config.Config) rt.Config {
	return rt.Config{
		Priority: cfg.Realtime.Priority,
		CPU:      cfg.Realtime.CPU,
		Mlockall: cfg.Realtime.Mlockall == nil || *cfg.Realtime.Mlockall,
	}
}
