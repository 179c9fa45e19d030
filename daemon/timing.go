package daemon

import (
	"fmt"

	"cand/config"
	"cand/mcp2515"
)

// Timing is the bit timing a controller will program: computed like the kernel's
// can_calc_bittiming, or taken from explicit CNF bytes or segments.
func Timing(cc *config.Controller) (mcp2515.BitTiming, error) { return cc.BitTiming() }

// CheckConfig returns, per controller, the timing it would program in the words
// of `ip -details link show`, followed by the CNF bytes, on one line. It also reads
// and checks metrics.web_config.
func CheckConfig(cfg *config.Config) ([]string, error) {
	if err := checkWebConfig(cfg); err != nil {
		return nil, err
	}
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
		c.Filters = filters(f)
	}
	return c
}

// filters maps the configuration onto RXM0/RXF0..1 (RXB0) and RXM1/RXF2..5 (RXB1).
// Filters the configuration leaves out repeat given ones of the same buffer, so they
// accept nothing new. With two filters or fewer, RXB1 gets RXB0's mask and filters:
// a frame that rolls over from a full RXB0 is then accepted by the same rule,
// instead of by RXB1's all-zero default mask (which would accept everything).
func filters(f *config.Filters) *mcp2515.Filters {
	id := func(c config.Filter) mcp2515.FilterID { return mcp2515.FilterID{ID: c.ID, Extended: c.Extended} }
	mf := &mcp2515.Filters{Rollover: f.Rollover == nil || *f.Rollover, NFilters: len(f.Filters)}
	mf.Mask[0], mf.Mask[1] = id(f.Mask0), id(f.Mask1)
	given := f.Filters
	if len(given) == 0 {
		given = []config.Filter{{}}
	}
	rxb0, rxb1 := given[:min(2, len(given))], given[min(2, len(given)):]
	if len(rxb1) == 0 {
		rxb1 = rxb0
		mf.Mask[1] = mf.Mask[0]
	}
	for i := 0; i < 2; i++ {
		mf.Filter[i] = id(rxb0[i%len(rxb0)])
	}
	for i := 2; i < 6; i++ {
		mf.Filter[i] = id(rxb1[(i-2)%len(rxb1)])
	}
	return mf
}
