package layers

import (
	"strings"
	"testing"
)

// rules is the layering (see doc.go), one fact a row: no package matching from may
// reach a package matching forbidden, directly or through other packages. A pattern
// is an import path, or one ending in "/..." for that path and everything below it.
var rules = []rule{
	{
		name:      "driver-without-simulator",
		from:      []string{"cand/hw/...", "cand/mcp2515", "cand/socketcan", "cand/canwire", "cand/bridge", "cand/metrics", "cand/internal/mono"},
		forbidden: []string{"cand/sim/..."},
		why:       "the driver runs on a Raspberry Pi; the daemon plugs the virtual Pi in",
	},
	{
		name:      "owner-without-config",
		from:      []string{"cand/bridge"},
		forbidden: []string{"cand/config"},
		why:       "the owner thread takes plain values; the daemon translates the YAML schema",
	},
	{
		name:      "socketcand-beside-the-owner",
		from:      []string{"cand/socketcand/..."},
		forbidden: []string{"cand/sim/...", "cand/bridge", "cand/config", "cand/daemon"},
		why:       "socketcand serves a socket as any SocketCAN application would: it knows neither the owner thread nor the simulator, and takes plain values from the daemon",
	},
	{
		name:      "sim-models-without-config",
		from:      []string{"cand/sim/canbus", "cand/sim/mcpchip", "cand/sim/soc", "cand/sim/clock"},
		forbidden: []string{"cand/config"},
		why:       "the models take plain parameters; cand/sim builds them from the configuration",
	},
}

// targets are the platforms cand is built for (make cross); build constraints may
// give a package other imports on each.
var targets = []target{
	{goos: "linux", goarch: "amd64"},
	{goos: "linux", goarch: "arm", goarm: "6"},
	{goos: "linux", goarch: "arm", goarm: "7"},
	{goos: "linux", goarch: "arm64"},
}

type rule struct {
	name      string
	from      []string
	forbidden []string
	why       string
}

func TestLayers(t *testing.T) {
	graphs := loadGraphs(t, targets)
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			var order []string
			on := map[string][]string{} // chain → the targets it exists on
			for i, g := range graphs {
				for _, chain := range g.violations(r.from, r.forbidden) {
					c := strings.Join(chain, " → ")
					if on[c] == nil {
						order = append(order, c)
					}
					on[c] = append(on[c], targets[i].String())
				}
			}
			for _, c := range order {
				t.Errorf("%s (%s): %s", c, strings.Join(on[c], ", "), r.why)
			}
		})
	}
}

// A rule that names no package checks nothing: every pattern must match a package
// of the module.
func TestRulesNamePackagesThatExist(t *testing.T) {
	graphs := loadGraphs(t, targets)
	for _, r := range rules {
		for _, p := range append(append([]string(nil), r.from...), r.forbidden...) {
			found := false
			for _, g := range graphs {
				found = found || g.anyMatches(p)
			}
			if !found {
				t.Errorf("rule %s: %q matches no package of the module", r.name, p)
			}
		}
	}
}
