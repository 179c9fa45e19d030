package config

import (
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"cand/hw/pinout"
)

// parseErr parses src and returns the error text ("" when it loads).
func parseErr(t *testing.T, name, src string) string {
	t.Helper()
	_, err := Parse(name, []byte(src))
	if err == nil {
		return ""
	}
	var e *Errors
	if !errors.As(err, &e) {
		t.Fatalf("error is %T, want *Errors: %v", err, err)
	}
	return err.Error()
}

const ok500 = "controllers:\n  - bitrate: 500000\n"

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, file, src, want string
	}{
		{"unknown key with suggestion", "deploy/bad.yaml",
			"hardware:\n  backend: sim\n\ncontrollers:\n  - name: a\n    interface: {name: vcan0}\n    bitrat: 500000\n",
			"deploy/bad.yaml:5:5: controllers[0].bitrate: missing: give the bus's bitrate, 10000..1000000 bit/s, e.g. bitrate: 500000\n" +
				"deploy/bad.yaml:7:5: controllers[0].bitrat: unknown key; did you mean bitrate? allowed keys: name, spi, int_gpio, int_poll_window, int_debounce, oscillator_hz, bitrate, sample_point, timing, mode, one_shot, triple_sampling, error_frames, restart_ms, tx_timeout, filters, interface, sim"},
		{"unknown key without suggestion", "x.yaml",
			"colour: red\n" + ok500,
			"x.yaml:1:1: colour: unknown key; allowed keys: hardware, realtime, metrics, status, socketcand, controllers"},
		{"bitrate 0", "deploy/bad.yaml",
			"# comment\n\n\n\n\n\ncontrollers:\n  - name: a\n    bitrate: 0\n",
			"deploy/bad.yaml:9:14: controllers[0].bitrate: 0 is not allowed: bitrate must be 10000..1000000 bit/s"},
		{"duration with a space", "x.yaml",
			"hardware:\n  backend: sim\n  poll_budget: 20 us\n" + ok500,
			`x.yaml:3:16: hardware.poll_budget: "20 us" is not a duration; write e.g. 20us, 1.5ms, 1s`},
		{"duplicate interface", "x.yaml",
			"controllers:\n  - bitrate: 500000\n    interface: {name: vcan0}\n  - bitrate: 500000\n    spi: {chip_select: ce1}\n    int_gpio: 24\n    interface: {name: vcan0}\n",
			`x.yaml:7:23: controllers[1].interface.name: "vcan0" is used by controllers[0] too (line 3); each controller needs its own interface`},
		{"interface deleted: neither recreate nor exit", "x.yaml",
			"controllers:\n  - bitrate: 500000\n    interface: {on_delete: restart}\n",
			`x.yaml:3:28: controllers[0].interface.on_delete: "restart" is not allowed; allowed: recreate, exit`},
		{"string where a number belongs", "x.yaml",
			"controllers:\n  - bitrate: fast\n",
			`x.yaml:2:14: controllers[0].bitrate: "fast" is not an integer; write e.g. 500000 or 0x7FF`},
		{"quoted number", "x.yaml",
			"controllers:\n  - bitrate: \"500000\"\n",
			`x.yaml:2:14: controllers[0].bitrate: "500000" is a quoted string; expected an integer: remove the quotes`},
		{"list where a mapping belongs", "x.yaml",
			"hardware: [sim]\n" + ok500,
			`x.yaml:1:11: hardware: expected a mapping with keys backend, core_clock_hz, poll_budget, gpio_chip, clock_source, analyzer_pins, hold_cpu_clock, sim_cpu, sim_board, sim_force_turbo, sim_kernel_cost, sim_host_noise, sim_stall_bus_after; got a list`},
		{"scalar where a list belongs", "x.yaml",
			"controllers: 1\n",
			`x.yaml:1:14: controllers: expected a list ("- item" lines, or [a, b]); got "1"`},
		{"duplicate key", "x.yaml",
			"controllers:\n  - bitrate: 500000\n    bitrate: 250000\n",
			"x.yaml:3:5: controllers[0].bitrate: duplicate key; already given at line 2; keep one"},
		{"unknown enum", "x.yaml",
			"hardware:\n  backend: bcm283\n" + ok500,
			`x.yaml:2:12: hardware.backend: "bcm283" is not allowed (did you mean bcm2835?); allowed: sim, bcm2835`},
		{"unknown enum far off", "x.yaml",
			"controllers:\n  - bitrate: 500000\n    mode: silent\n",
			`x.yaml:3:11: controllers[0].mode: "silent" is not allowed; allowed: normal, listen-only, loopback`},
		{"boolean", "x.yaml",
			"realtime:\n  mlockall: yes\n" + ok500,
			`x.yaml:2:13: realtime.mlockall: "yes" is not a boolean; write true or false`},
		{"uint8 overflow", "x.yaml",
			"controllers:\n  - bitrate: 500000\n    spi: {mode: 300}\n",
			"x.yaml:3:17: controllers[0].spi.mode: 300 is out of range: allowed 0..255"},
		{"negative for unsigned", "x.yaml",
			"controllers:\n  - bitrate: -5\n",
			"x.yaml:2:14: controllers[0].bitrate: -5 is out of range: allowed 0..4294967295"},
		{"no controllers", "x.yaml",
			"hardware: {backend: sim}\n",
			"x.yaml:1:1: controllers: at least one controller is required, e.g.\n  controllers:\n    - bitrate: 500000"},
		{"empty file", "x.yaml", "",
			"x.yaml: the file is empty; give at least one controller, e.g.\n  controllers:\n    - bitrate: 500000\n(deploy/cand.yaml is a commented example)"},
		{"syntax error", "x.yaml", "controllers:\n  - bitrate: 1\n - x: [\n",
			"x.yaml:3: YAML syntax: did not find expected key; check the indentation: the keys of one mapping, and the - items of one list, start in the same column"},
		{"control character", "x.yaml", "a: \x01\n",
			"x.yaml:1: YAML syntax: control characters are not allowed; remove them (the file must be UTF-8 text)"},
		{"merge key", "x.yaml", "base: &b {bitrate: 500000}\n",
			"x.yaml:1:1: base: unknown key; allowed keys: hardware, realtime, metrics, status, socketcand, controllers\n" +
				"x.yaml:1:1: controllers: at least one controller is required, e.g.\n  controllers:\n    - bitrate: 500000"},
		{"bitrate out of range", "x.yaml", "controllers:\n  - bitrate: 2000000\n",
			"x.yaml:2:14: controllers[0].bitrate: 2000000 is not allowed: bitrate must be 10000..1000000 bit/s"},
		{"impossible bit timing", "x.yaml", "controllers:\n  - bitrate: 1000000\n    oscillator_hz: 8000000\n",
			"x.yaml:2:14: controllers[0].bitrate: 8 MHz oscillator cannot make 1000000 bit/s: nearest is 666666 bit/s (33.3 % off, limit 5 %); use a 16 MHz crystal or a lower bitrate"},
		{"oscillator", "x.yaml", "controllers:\n  - bitrate: 500000\n    oscillator_hz: 40000000\n",
			"x.yaml:3:20: controllers[0].oscillator_hz: 40000000 is not allowed: the MCP2515's crystal is 1000000..25000000 Hz (read it off the can: 8, 12, 16 or 20 MHz)"},
		{"sample point", "x.yaml", "controllers:\n  - bitrate: 500000\n    sample_point: 87.5\n",
			"x.yaml:3:19: controllers[0].sample_point: 87.5 is not allowed: sample_point is the fraction of the bit where the bus is sampled, between 0 and 1 (e.g. 0.875), or 0 for the kernel's default"},
		{"spi clock", "x.yaml", "controllers:\n  - bitrate: 500000\n    spi: {clock_hz: 20000000}\n",
			"x.yaml:3:21: controllers[0].spi.clock_hz: 20000000 is not allowed: the MCP2515's SPI runs at 1000..10000000 Hz (10 MHz is its datasheet maximum)"},
		{"spi mode 1", "x.yaml", "controllers:\n  - bitrate: 500000\n    spi: {mode: 1}\n",
			"x.yaml:3:17: controllers[0].spi.mode: SPI mode 1 is not allowed: the MCP2515 supports only modes 0 and 3; use 0"},
		{"spi mode 4", "x.yaml", "controllers:\n  - bitrate: 500000\n    spi: {mode: 4}\n",
			"x.yaml:3:17: controllers[0].spi.mode: 4 is out of range: SPI modes are 0..3, and the MCP2515 supports only 0 and 3"},
		{"chip select word", "x.yaml", "controllers:\n  - bitrate: 500000\n    spi: {chip_select: ce2}\n",
			`x.yaml:3:24: controllers[0].spi.chip_select: "ce2" is not a chip select; write ce0, ce1 or gpioN with N a BCM GPIO 0..53`},
		{"chip select on MOSI", "x.yaml", "controllers:\n  - bitrate: 500000\n    spi: {chip_select: gpio10}\n",
			"x.yaml:3:24: controllers[0].spi.chip_select: gpio10 is an SPI0 data pin (MISO 9, MOSI 10, SCLK 11); write ce0, ce1 or another gpioN"},
		{"chip select beyond 53", "x.yaml", "controllers:\n  - bitrate: 500000\n    spi: {chip_select: gpio54}\n",
			`x.yaml:3:24: controllers[0].spi.chip_select: "gpio54" is not a chip select; write ce0, ce1 or gpioN with N a BCM GPIO 0..53`},
		{"same chip select", "x.yaml", "controllers:\n  - bitrate: 500000\n  - bitrate: 500000\n    int_gpio: 24\n    spi: {chip_select: gpio8}\n",
			"x.yaml:5:24: controllers[1].spi.chip_select: gpio8 (GPIO 8) is used by controllers[0] too (line 2); give each controller its own chip select, e.g. chip_select: ce1"},
		{"same chip select in other letter case", "x.yaml", "controllers:\n  - bitrate: 500000\n    spi: {chip_select: CE1}\n  - bitrate: 500000\n    int_gpio: 24\n    spi: {chip_select: Gpio7}\n",
			"x.yaml:6:24: controllers[1].spi.chip_select: gpio7 (GPIO 7) is used by controllers[0] too (line 3); give each controller its own chip select, e.g. chip_select: ce1"},
		{"chip select upper case on SCLK", "x.yaml", "controllers:\n  - bitrate: 500000\n    spi: {chip_select: GPIO11}\n",
			"x.yaml:3:24: controllers[0].spi.chip_select: GPIO11 is an SPI0 data pin (MISO 9, MOSI 10, SCLK 11); write ce0, ce1 or another gpioN"},
		{"chip select upper case beyond 53", "x.yaml", "controllers:\n  - bitrate: 500000\n    spi: {chip_select: GPIO60}\n",
			`x.yaml:3:24: controllers[0].spi.chip_select: "GPIO60" is not a chip select; write ce0, ce1 or gpioN with N a BCM GPIO 0..53`},
		{"chip select leading zero", "x.yaml", "controllers:\n  - bitrate: 500000\n    spi: {chip_select: gpio05}\n",
			`x.yaml:3:24: controllers[0].spi.chip_select: "gpio05" is not a chip select; write ce0, ce1 or gpioN with N a BCM GPIO 0..53`},
		{"chip select signed", "x.yaml", "controllers:\n  - bitrate: 500000\n    spi: {chip_select: gpio+5}\n",
			`x.yaml:3:24: controllers[0].spi.chip_select: "gpio+5" is not a chip select; write ce0, ce1 or gpioN with N a BCM GPIO 0..53`},
		{"chip select empty", "x.yaml", "controllers:\n  - bitrate: 500000\n    spi: {chip_select: \"\"}\n",
			`x.yaml:3:24: controllers[0].spi.chip_select: "" is not a chip select; write ce0, ce1 or gpioN with N a BCM GPIO 0..53`},
		{"chip select number", "x.yaml", "controllers:\n  - bitrate: 500000\n    spi: {chip_select: 8}\n",
			`x.yaml:3:24: controllers[0].spi.chip_select: "8" is not a chip select; write ce0, ce1 or gpioN with N a BCM GPIO 0..53`},
		{"chip select list", "x.yaml", "controllers:\n  - bitrate: 500000\n    spi: {chip_select: [ce0]}\n",
			`x.yaml:3:24: controllers[0].spi.chip_select: expected a string; got a list`},
		{"bad chip select is no clash", "x.yaml", "controllers:\n  - bitrate: 500000\n    spi: {chip_select: gpio99}\n  - bitrate: 500000\n    int_gpio: 24\n    spi: {chip_select: gpio98}\n",
			`x.yaml:3:24: controllers[0].spi.chip_select: "gpio99" is not a chip select; write ce0, ce1 or gpioN with N a BCM GPIO 0..53` + "\n" +
				`x.yaml:6:24: controllers[1].spi.chip_select: "gpio98" is not a chip select; write ce0, ce1 or gpioN with N a BCM GPIO 0..53`},
		{"INT on upper-case chip select", "x.yaml", "controllers:\n  - bitrate: 500000\n    spi: {chip_select: GPIO24}\n    int_gpio: 24\n",
			"x.yaml:4:15: controllers[0].int_gpio: GPIO 24 is the chip select of controllers[0]; the INT line needs a pin of its own"},
		{"same INT", "x.yaml", "controllers:\n  - bitrate: 500000\n  - bitrate: 500000\n    spi: {chip_select: ce1}\n",
			"x.yaml:3:5: controllers[1].int_gpio: GPIO 25 is used by controllers[0] too (line 2); each MCP2515 needs its own INT line"},
		{"INT on SPI pin", "x.yaml", "controllers:\n  - bitrate: 500000\n    int_gpio: 11\n",
			"x.yaml:3:15: controllers[0].int_gpio: GPIO 11 is an SPI0 data pin (MISO 9, MOSI 10, SCLK 11); give the GPIO the MCP2515's INT is wired to"},
		{"INT on chip select", "x.yaml", "controllers:\n  - bitrate: 500000\n    int_gpio: 8\n",
			"x.yaml:3:15: controllers[0].int_gpio: GPIO 8 is the chip select of controllers[0]; the INT line needs a pin of its own"},
		{"INT out of range", "x.yaml", "controllers:\n  - bitrate: 500000\n    int_gpio: 60\n",
			"x.yaml:3:15: controllers[0].int_gpio: 60 is not allowed: a BCM GPIO 0..53 (PiCAN2 and Waveshare boards use 25)"},
		{"too many filters", "x.yaml", "controllers:\n  - bitrate: 500000\n    filters:\n      filters: [{id: 1}, {id: 2}, {id: 3}, {id: 4}, {id: 5}, {id: 6}, {id: 7}]\n",
			"x.yaml:4:16: controllers[0].filters.filters: 7 filters given: the MCP2515 has 6 (RXF0..RXF5); drop 1"},
		{"standard filter ID", "x.yaml", "controllers:\n  - bitrate: 500000\n    filters:\n      mask0: {id: 0x800}\n      filters: [{id: 0x1FFFFFFF, extended: true}, {id: 0x20000000, extended: true}]\n",
			"x.yaml:4:19: controllers[0].filters.mask0.id: 0x800 is not an 11-bit standard ID: allowed 0..0x7FF; set extended: true for a 29-bit ID\n" +
				"x.yaml:5:56: controllers[0].filters.filters[1].id: 0x20000000 is not a 29-bit ID: allowed 0..0x1FFFFFFF"},
		{"interface name", "x.yaml", "controllers:\n  - bitrate: 500000\n    interface: {name: averyveryverylongname}\n",
			`x.yaml:3:23: controllers[0].interface.name: "averyveryverylongname" is not a valid interface name: 21 characters, Linux allows at most 15`},
		{"interface name slash", "x.yaml", "controllers:\n  - bitrate: 500000\n    interface: {name: \"can/0\"}\n",
			`x.yaml:3:23: controllers[0].interface.name: "can/0" is not a valid interface name: '/' is not allowed (Linux refuses '/', ':' and white space)`},
		{"vcan with peer", "x.yaml", "controllers:\n  - bitrate: 500000\n    interface: {peer: x}\n",
			"x.yaml:3:23: controllers[0].interface.peer: only a vxcan pair has a peer; remove peer or set kind: vxcan"},
		{"vxcan peer too long", "x.yaml", "controllers:\n  - bitrate: 500000\n    interface: {name: abcdefghijklmno, kind: vxcan}\n",
			`x.yaml:3:16: controllers[0].interface.peer: "abcdefghijklmnop" is not a valid interface name: 16 characters, Linux allows at most 15`},
		{"vxcan peer clashes", "x.yaml", "controllers:\n  - bitrate: 500000\n    interface: {name: can0, kind: vxcan}\n  - bitrate: 500000\n    int_gpio: 24\n    spi: {chip_select: ce1}\n    interface: {name: can0p}\n",
			`x.yaml:7:23: controllers[1].interface.name: "can0p" is used by controllers[0].interface.peer too (by default the interface name + "p", line 3); each controller needs its own interface`},
		{"priority", "x.yaml", "realtime: {priority: 100}\n" + ok500,
			"x.yaml:1:22: realtime.priority: 100 is not allowed: SCHED_FIFO priority 1..99, or 0 for normal scheduling"},
		{"metrics listen", "x.yaml", "metrics: {listen: localhost}\n" + ok500,
			`x.yaml:1:19: metrics.listen: "localhost" is not host:port; write e.g. 127.0.0.1:9108 or :9108, or "" to turn metrics off`},
		{"analyzer pin on INT", "x.yaml", "hardware:\n  analyzer_pins: {spi: 25, interrupt: 9}\n" + ok500,
			"x.yaml:2:24: hardware.analyzer_pins.spi: GPIO 25 is the INT line of controllers[0]; pick another GPIO\n" +
				"x.yaml:2:39: hardware.analyzer_pins.interrupt: GPIO 9 is an SPI0 data pin (MISO 9, MOSI 10, SCLK 11); pick another GPIO"},
		{"timing both kinds", "x.yaml", "controllers:\n  - bitrate: 500000\n    timing: {cnf1: 0, brp: 1}\n",
			"x.yaml:3:13: controllers[0].timing: give either cnf1, cnf2, cnf3 or brp, prop_seg, phase_seg1, phase_seg2 (and sjw), not both"},
		{"timing partial cnf", "x.yaml", "controllers:\n  - bitrate: 500000\n    timing: {cnf1: 0}\n",
			"x.yaml:3:13: controllers[0].timing: cnf2, cnf3 missing: give all three of cnf1, cnf2, cnf3"},
		{"timing partial segments", "x.yaml", "controllers:\n  - bitrate: 500000\n    timing: {brp: 1, sjw: 1}\n",
			"x.yaml:3:13: controllers[0].timing: prop_seg, phase_seg1, phase_seg2 missing: give brp, prop_seg, phase_seg1, phase_seg2 (sjw defaults to 1)"},
		{"timing breaks datasheet", "x.yaml", "controllers:\n  - timing: {cnf1: 0x00, cnf2: 0x80, cnf3: 0x80}\n    oscillator_hz: 8000000\n",
			"x.yaml:2:13: controllers[0].timing: cnf1 0x00 cnf2 0x80 cnf3 0x80: phase-seg2 1 TQ is out of range: the MCP2515 allows 2..8 (at least the 2-TQ information processing time)"},
		{"timing disagrees with bitrate", "x.yaml", "controllers:\n  - bitrate: 250000\n    timing: {cnf1: 0x00, cnf2: 0xB5, cnf3: 0x01}\n",
			"x.yaml:2:14: controllers[0].bitrate: 250000 bit/s, but timing makes 500000 bit/s (100.0 % off, limit 5 %); fix one of them or remove bitrate"},
		{"timing with sample point", "x.yaml", "controllers:\n  - sample_point: 0.8\n    timing: {brp: 1, prop_seg: 6, phase_seg1: 7, phase_seg2: 2}\n",
			"x.yaml:2:19: controllers[0].sample_point: has no effect with timing; remove one of them"},
		{"timing SAM disagreement", "x.yaml", "controllers:\n  - triple_sampling: true\n    timing: {cnf1: 0x00, cnf2: 0xB5, cnf3: 0x01}\n",
			"x.yaml:2:22: controllers[0].triple_sampling: true, but timing.cnf2 0xb5 lacks SAM (0x40); set it there or remove triple_sampling"},
		{"peer kind missing", "x.yaml", "controllers:\n  - bitrate: 500000\n    sim:\n      peers:\n        - ids: [1]\n",
			"x.yaml:5:11: controllers[0].sim.peers[0].kind: required; allowed: periodic, answer, load, errors"},
		{"peer rules", "x.yaml", "controllers:\n  - bitrate: 500000\n    sim:\n      peers:\n        - {kind: periodic, ids: [0x800], period: 0s, dlc: 9}\n        - {kind: load, ids: [0x1FFFFFFF], extended: true, load_percent: 150}\n        - {kind: answer, ids: [1], load_percent: 5}\n        - {kind: load}\n",
			"x.yaml:5:34: controllers[0].sim.peers[0].ids[0]: 0x800 is not an 11-bit standard ID: allowed 0..0x7FF; set extended: true for a 29-bit ID\n" +
				"x.yaml:5:50: controllers[0].sim.peers[0].period: 0s is not allowed: a periodic peer needs a period above 0, e.g. 100ms\n" +
				"x.yaml:5:59: controllers[0].sim.peers[0].dlc: 9 is not allowed: a classic CAN frame carries 0..8 bytes\n" +
				"x.yaml:6:73: controllers[0].sim.peers[1].load_percent: 150 is not allowed: a share of bus time, 1..100\n" +
				"x.yaml:7:31: controllers[0].sim.peers[2].ids: an answer peer sends no IDs of its own (it answers with ID + id_offset); remove ids\n" +
				"x.yaml:7:50: controllers[0].sim.peers[2].load_percent: applies only to load peers; remove it\n" +
				"x.yaml:8:11: controllers[0].sim.peers[3].ids: a load peer needs at least one ID, e.g. ids: [0x100]\n" +
				"x.yaml:8:11: controllers[0].sim.peers[3].load_percent: required for a load peer: its share of bus time, 1..100"},
		{"peer frame shapes", "x.yaml", "controllers:\n  - bitrate: 500000\n    sim:\n      peers:\n        - {kind: periodic, ids: [1, 2], dlc: 4, dlcs: [1, 9, 3]}\n        - {kind: load, ids: [1], load_percent: 5, remote: true, payload: stuff-max}\n        - {kind: errors, ids: [1], period: 0s, payload: counter}\n        - {kind: periodic, ids: [1], payload: most}\n",
			"x.yaml:5:55: controllers[0].sim.peers[0].dlcs: give either dlc (every frame) or dlcs (one per id), not both\n" +
				"x.yaml:5:59: controllers[0].sim.peers[0].dlcs[1]: 9 is not allowed: a classic CAN frame carries 0..8 bytes\n" +
				"x.yaml:6:74: controllers[0].sim.peers[1].payload: stuff-max with remote: true: remote frames carry no data; remove one of them\n" +
				"x.yaml:7:31: controllers[0].sim.peers[2].ids: an errors peer sends no frames of its own (it destroys other nodes' frames); remove ids\n" +
				"x.yaml:7:44: controllers[0].sim.peers[2].period: 0s is not allowed: an errors peer needs a period above 0, e.g. 100ms\n" +
				"x.yaml:7:57: controllers[0].sim.peers[2].payload: applies only to periodic and load peers, which send frames of their own; remove it\n" +
				"x.yaml:8:47: controllers[0].sim.peers[3].payload: \"most\" is not allowed; allowed: counter, stuff-min, stuff-max"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseErr(t, tc.file, tc.src); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// All problems are reported, sorted by line, capped at MaxProblems.
func TestParseErrorsAllSortedCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("controllers:\n")
	for i := range 30 {
		b.WriteString("  - bitrate: 1\n    interface: {name: c" + strings.Repeat("x", i%2) + "}\n")
	}
	_, err := Parse("x.yaml", []byte(b.String()))
	var e *Errors
	if !errors.As(err, &e) {
		t.Fatalf("got %v", err)
	}
	if len(e.Problems) != MaxProblems || e.Omitted == 0 {
		t.Fatalf("got %d problems, %d omitted; want %d shown and more omitted", len(e.Problems), e.Omitted, MaxProblems)
	}
	for i := 1; i < len(e.Problems); i++ {
		if e.Problems[i].Line < e.Problems[i-1].Line {
			t.Errorf("not sorted: %v before %v", e.Problems[i-1], e.Problems[i])
		}
	}
	if !strings.HasSuffix(err.Error(), "more problems not shown; fix these first)") {
		t.Errorf("no omission line: %s", err)
	}
}

// chip_select is read in any letter case, once, into the typed value the hardware uses.
func TestChipSelectAnyCase(t *testing.T) {
	c, err := Parse("x.yaml", []byte("controllers:\n  - bitrate: 500000\n    spi: {chip_select: CE1}\n  - bitrate: 500000\n    spi: {chip_select: Gpio5}\n    int_gpio: 24\n  - bitrate: 500000\n    spi: {chip_select: \"ce0\"}\n    int_gpio: 23\n"))
	if err != nil {
		t.Fatal(err)
	}
	gpio5, _ := pinout.ParseChipSelect("gpio5")
	for i, want := range []pinout.ChipSelect{pinout.CE1, gpio5, pinout.CE0} {
		if got := c.Controllers[i].SPI.ChipSelect; got != want {
			t.Errorf("controllers[%d].spi.chip_select = %v, want %v", i, got, want)
		}
	}
}

func TestDefaults(t *testing.T) {
	c, err := Parse("x.yaml", []byte("controllers:\n  - bitrate: 500000\n  - bitrate: 250000\n    spi: {chip_select: ce1}\n    int_gpio: 24\n    interface: {kind: vxcan}\n    sim:\n      peers: [{kind: answer}, {kind: periodic, ids: [1]}]\n    filters: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Hardware: Hardware{Backend: BackendSim, PollBudget: Duration(20 * time.Microsecond), GPIOChip: "/dev/gpiochip0",
			AnalyzerPins: AnalyzerPins{-1, -1, -1}, SimCPU: SimCPUStrict, SimBoard: SimBoardPi3, SimKernelCost: SimKernelCostBoard, SimHostNoise: SimHostNoiseClip, ClockSource: ClockSourceAuto},
		Realtime: Realtime{Priority: 40, CPU: -1, Mlockall: ptr(true), Delivery: DeliveryAuto, DeliveryCPU: -1},
		Metrics: Metrics{Listen: ptr("127.0.0.1:9108"), MaxConnections: 8, ReadTimeout: Duration(5 * time.Second),
			WriteTimeout: Duration(10 * time.Second), IdleTimeout: Duration(30 * time.Second)},
		Status:     Status{Socket: ptr("/run/cand/status.sock")},
		Socketcand: Socketcand{Listen: AddrPort{netip.MustParseAddrPort("127.0.0.1:29536")}, MaxClients: 8},
		Controllers: []Controller{{
			Name: "vcan0", SPI: SPI{ClockHz: 10_000_000, ChipSelect: pinout.CE0}, IntGPIO: 25, IntPollWindow: DefaultIntPollWindow,
			OscillatorHz: 16_000_000, Bitrate: 500_000, Mode: ModeNormal, ErrorFrames: ptr(true),
			RestartMs: ptr(uint32(100)), TxTimeout: Duration(time.Second),
			Interface: Interface{Name: "vcan0", Kind: KindVCAN, RcvBuf: 4 << 20, OnDelete: OnDeleteRecreate},
		}, {
			Name: "vcan1", SPI: SPI{ClockHz: 10_000_000, ChipSelect: pinout.CE1}, IntGPIO: 24, IntPollWindow: DefaultIntPollWindow,
			OscillatorHz: 16_000_000, Bitrate: 250_000, Mode: ModeNormal, ErrorFrames: ptr(true),
			RestartMs: ptr(uint32(100)), TxTimeout: Duration(time.Second),
			Filters:   &Filters{Rollover: ptr(true)},
			Interface: Interface{Name: "vcan1", Kind: KindVXCAN, Peer: "vcan1p", RcvBuf: 4 << 20, OnDelete: OnDeleteRecreate},
			Sim: SimBus{Peers: []SimPeer{
				{Kind: PeerAnswer, Name: "answer0", Period: Duration(100 * time.Millisecond), DLC: ptr(uint8(8)), IDOffset: 1},
				{Kind: PeerPeriodic, Name: "periodic1", IDs: []uint32{1}, Period: Duration(100 * time.Millisecond), DLC: ptr(uint8(8)), IDOffset: 1},
			}},
		}},
		Warnings: []string{},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got\n%+v\nwant\n%+v", *c, *want)
	}
}

// Default interface names skip the ones other controllers chose; explicit zeros stay.
func TestDefaultsPresence(t *testing.T) {
	c, err := Parse("x.yaml", []byte("hardware: {backend: bcm2835, analyzer_pins: {interrupt: 0}}\nrealtime: {priority: 0, cpu: 0}\nmetrics: {listen: \"\"}\ncontrollers:\n  - bitrate: 500000\n    int_gpio: 1\n  - bitrate: 500000\n    spi: {chip_select: ce1}\n    int_gpio: 2\n    interface: {name: can0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{c.Controllers[0].Interface.Name, c.Controllers[1].Interface.Name}; got[0] != "can1" || got[1] != "can0" {
		t.Errorf("interface names %v, want [can1 can0]", got)
	}
	if c.Hardware.AnalyzerPins.Interrupt != 0 || c.Realtime.Priority != 0 || c.Realtime.CPU != 0 || *c.Metrics.Listen != "" {
		t.Errorf("explicit zeros replaced: %+v", c)
	}
}

func TestWarnings(t *testing.T) {
	c, err := Parse("x.yaml", []byte("hardware: {backend: bcm2835, sim_cpu: shared}\nrealtime: {priority: 60}\ncontrollers:\n  - bitrate: 1000000\n    oscillator_hz: 12000000\n    spi: {cs_active_high: true}\n    sim: {peers: [{kind: answer}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"x.yaml:1:39: hardware.sim_cpu: ignored: the bcm2835 backend runs on the real CPU",
		"x.yaml:2:22: realtime.priority: 60 is not below the kernel's IRQ threads (50): the owner thread can starve the GPIO interrupt thread that wakes it; 40 is the default",
		"x.yaml:4:14: controllers[0].bitrate: the kernel's timing for this (bitrate 1000000 sample-point 0.666 tq 166 prop-seg 1 phase-seg1 2 phase-seg2 2 sjw 1 brp 1 cnf1 0x00 cnf2 0x88 cnf3 0x01) breaks a datasheet rule: 6 TQ per bit (1+1+2+2) is out of range: the MCP2515 needs 8..25; cand programs it as the kernel would, or give timing explicitly",
		"x.yaml:6:27: controllers[0].spi.cs_active_high: the MCP2515's chip select is active-low; keep this only if your board inverts the line",
		"x.yaml:7:18: controllers[0].sim.peers: ignored: the bcm2835 backend talks to a real bus",
	}
	if !reflect.DeepEqual(c.Warnings, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(c.Warnings, "\n"), strings.Join(want, "\n"))
	}
}

func TestHexAndTiming(t *testing.T) {
	c, err := Parse("x.yaml", []byte("controllers:\n  - timing: {cnf1: 0x00, cnf2: 0xF5, cnf3: 0x01}\n    triple_sampling: true\n    filters: {mask0: {id: 0x7FF}, filters: [{id: 0x18DAF110, extended: true}, {id: 010}]}\n  - bitrate: 250000\n    oscillator_hz: 20000000\n    spi: {chip_select: gpio5}\n    int_gpio: 6\n    timing: {brp: 2, prop_seg: 8, phase_seg1: 8, phase_seg2: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	c0, c1 := &c.Controllers[0], &c.Controllers[1]
	if c0.Bitrate != 500_000 || c0.Filters.Mask0.ID != 0x7FF || c0.Filters.Filters[0].ID != 0x18DAF110 || c0.Filters.Filters[1].ID != 10 {
		t.Errorf("got %+v %+v", c0, c0.Filters)
	}
	bt, err := c0.BitTiming()
	if err != nil || bt.String() != "bitrate 500000 sample-point 0.875 tq 125 prop-seg 6 phase-seg1 7 phase-seg2 2 sjw 1 brp 1 cnf1 0x00 cnf2 0xf5 cnf3 0x01" {
		t.Errorf("BitTiming() = %s, %v", bt, err)
	}
	bt, err = c1.BitTiming()
	if err != nil || bt.CNF1 != 0x01 || bt.CNF2 != 0xBF || bt.CNF3 != 0x02 {
		t.Errorf("BitTiming() = %s, %v", bt, err)
	}
}

// The shipped configurations load without a problem or a warning.
func TestDeployFiles(t *testing.T) {
	for _, f := range []string{"../deploy/sim.yaml", "../deploy/cand.yaml"} {
		c, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if len(c.Warnings) != 0 {
			t.Errorf("%s: warnings %q", f, c.Warnings)
		}
		bt, err := c.Controllers[0].BitTiming()
		if err != nil || bt.CNF1 != 0x00 || bt.CNF2 != 0xB5 || bt.CNF3 != 0x01 {
			t.Errorf("%s: timing %s, %v; want 00 b5 01", f, bt, err)
		}
	}
	c, err := Load("../deploy/sim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	peers := c.Controllers[0].Sim.Peers
	if c.Hardware.Backend != BackendSim || *c.Metrics.Listen != "0.0.0.0:9108" || c.Controllers[0].Interface.Name != "vcan0" ||
		len(peers) != 3 || peers[0].IDs[0] != 0x100 || peers[1].IDs[0] != 0x18DAF110 || !peers[1].Extended || peers[2].Kind != PeerAnswer {
		t.Errorf("sim.yaml: %+v", c)
	}
}

func TestClosest(t *testing.T) {
	keys := []string{"bitrate", "sample_point", "oscillator_hz", "interface"}
	for in, want := range map[string]string{"bitrat": "bitrate", "birtate": "bitrate", "oscillator": "oscillator_hz", "iface": "", "x": ""} {
		if got := closest(in, keys); got != want {
			t.Errorf("closest(%q) = %q, want %q", in, got, want)
		}
	}
}

// realtime.delivery takes one of its names (default auto); realtime.delivery_cpu
// a CPU or -1, with a warning when it is the owner thread's CPU.
func TestRealtimeDelivery(t *testing.T) {
	c, err := Parse("x.yaml", []byte("realtime: {cpu: 2, delivery: thread, delivery_cpu: 3}\n"+ok500))
	if err != nil {
		t.Fatal(err)
	}
	if c.Realtime.Delivery != DeliveryThread || c.Realtime.DeliveryCPU != 3 || len(c.Warnings) != 0 {
		t.Fatalf("delivery %q on CPU %d, warnings %q; want thread on 3, none", c.Realtime.Delivery, c.Realtime.DeliveryCPU, c.Warnings)
	}
	c, err = Parse("x.yaml", []byte("realtime: {cpu: 2, delivery_cpu: 2}\n"+ok500))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"x.yaml:1:34: realtime.delivery_cpu: CPU 2 is realtime.cpu too: the delivery thread then takes the owner thread's core, which it exists to spare; pin it to another CPU"}
	if fmt.Sprint(c.Warnings) != fmt.Sprint(want) {
		t.Fatalf("warnings %q, want %q", c.Warnings, want)
	}
	for in, want := range map[string]string{
		"realtime: {delivery: sometimes}\n": `x.yaml:1:22: realtime.delivery: "sometimes" is not allowed; allowed: auto, thread, owner, inline`,
		"realtime: {delivery_cpu: -2}\n":    "x.yaml:1:26: realtime.delivery_cpu: -2 is not allowed: a CPU number 0..1023, or -1 for no pinning",
	} {
		_, err := Parse("x.yaml", []byte(in+ok500))
		if err == nil || err.Error() != want {
			t.Errorf("%q: error %v, want %s", in, err, want)
		}
	}
}
