package config

import (
	"strings"
	"testing"
)

// Names are bounded in length and characters, and every message repeats at most
// the start of a long value.
func TestNameErrors(t *testing.T) {
	long := strings.Repeat("a", 1_000_000)
	const rule = "1..32 letters, digits, '_', '.' or '-'"
	for _, tc := range []struct{ name, src, want string }{
		{"controller name of a million characters", "controllers:\n  - name: " + long + "\n    bitrate: 500000\n",
			`x.yaml:2:11: controllers[0].name: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"... (1000000 bytes) is not a valid name: 1000000 characters, at most 32; names label logs and metrics: use ` + rule},
		{"controller name of 33 characters", "controllers:\n  - name: " + strings.Repeat("b", 33) + "\n    bitrate: 500000\n",
			`x.yaml:2:11: controllers[0].name: "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" is not a valid name: 33 characters, at most 32; names label logs and metrics: use ` + rule},
		{"controller name with a space", "controllers:\n  - name: front axle\n    bitrate: 500000\n",
			`x.yaml:2:11: controllers[0].name: "front axle" is not a valid name: ' ' is not allowed; names label logs and metrics: use ` + rule},
		{"controller name not ASCII", "controllers:\n  - name: vorne-ö\n    bitrate: 500000\n",
			`x.yaml:2:11: controllers[0].name: "vorne-ö" is not a valid name: 'ö' is not allowed; names label logs and metrics: use ` + rule},
		{"controller name empty", "controllers:\n  - name: \"\"\n    bitrate: 500000\n",
			`x.yaml:2:11: controllers[0].name: "" is not a valid name: it is empty; names label logs and metrics: use ` + rule},
		{"controller name from the interface", "controllers:\n  - bitrate: 500000\n    interface: {name: can+0}\n",
			`x.yaml:2:5: controllers[0].name: "can+0" (by default the interface name) is not a valid name: '+' is not allowed; give the controller a name of ` + rule},
		{"interface name of a million characters", "controllers:\n  - name: c\n    bitrate: 500000\n    interface: {name: " + long + "}\n",
			`x.yaml:4:23: controllers[0].interface.name: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"... (1000000 bytes) is not a valid interface name: 1000000 characters, Linux allows at most 15`},
		{"interface name with %d", "controllers:\n  - bitrate: 500000\n    interface: {name: \"can%d\"}\n",
			`x.yaml:3:23: controllers[0].interface.name: "can%d" is not a valid interface name: '%' is not allowed (the kernel would replace %d with a number of its choosing)`},
		{"interface name with a colon", "controllers:\n  - bitrate: 500000\n    interface: {name: \"can0:1\"}\n",
			`x.yaml:3:23: controllers[0].interface.name: "can0:1" is not a valid interface name: ':' is not allowed (Linux refuses '/', ':' and white space)`},
		{"interface name with a tab", "controllers:\n  - bitrate: 500000\n    interface: {name: \"can\\t0\"}\n",
			`x.yaml:3:23: controllers[0].interface.name: "can\t0" is not a valid interface name: '\t' is not allowed: use printable ASCII`},
		{"interface name not ASCII", "controllers:\n  - bitrate: 500000\n    interface: {name: \"càn0\"}\n",
			`x.yaml:3:23: controllers[0].interface.name: "càn0" is not a valid interface name: 'à' is not allowed: use printable ASCII`},
		{"interface name dot dot", "controllers:\n  - bitrate: 500000\n    interface: {name: \"..\"}\n",
			`x.yaml:3:23: controllers[0].interface.name: ".." is not a valid interface name: it is reserved`},
		{"interface name empty", "controllers:\n  - bitrate: 500000\n    interface: {name: \"\"}\n",
			`x.yaml:3:23: controllers[0].interface.name: "" is not a valid interface name: it is empty`},
		{"vxcan peer with a space", "controllers:\n  - bitrate: 500000\n    interface: {kind: vxcan, peer: \"can 0\"}\n",
			`x.yaml:3:36: controllers[0].interface.peer: "can 0" is not a valid interface name: ' ' is not allowed (Linux refuses '/', ':' and white space)`},
		{"sim peer name", "controllers:\n  - bitrate: 500000\n    sim: {peers: [{kind: answer, name: \"ecu 1\"}]}\n",
			`x.yaml:3:40: controllers[0].sim.peers[0].name: "ecu 1" is not a valid name: ' ' is not allowed; use ` + rule},
		// YAML limits simple keys to 1024 characters.
		{"unknown key of 1000 characters", long[:1000] + ": 1\n" + ok500,
			`x.yaml:1:1: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa... (1000 bytes): unknown key; allowed keys: hardware, realtime, metrics, status, socketcand, controllers`},
		{"enum value of a million characters", "hardware: {backend: " + long + "}\n" + ok500,
			`x.yaml:1:21: hardware.backend: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"... (1000000 bytes) is not allowed; allowed: sim, bcm2835`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseErr(t, "x.yaml", tc.src); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// Two controllers, two interfaces, or two peers on one bus never share a name,
// whether the file writes the names or they are defaults.
func TestDuplicateNames(t *testing.T) {
	const second = "  - bitrate: 500000\n    int_gpio: 24\n    spi: {chip_select: ce1}\n"
	for _, tc := range []struct{ name, src, want string }{
		{"both written", "controllers:\n  - name: a\n    bitrate: 500000\n" + second + "    name: a\n",
			`x.yaml:7:11: controllers[1].name: "a" is used by controllers[0] too (line 2); names label logs and metrics, give each controller its own`},
		{"written, then the default", "controllers:\n  - name: vcan1\n    bitrate: 500000\n" + second,
			`x.yaml:4:5: controllers[1].name: "vcan1" (by default the interface name) is used by controllers[0] too (line 2); names label logs and metrics, give each controller its own`},
		{"the default, then written", "controllers:\n  - bitrate: 500000\n" + second + "    name: vcan0\n",
			`x.yaml:6:11: controllers[1].name: "vcan0" is used by controllers[0] too (by default the interface name, line 2); names label logs and metrics, give each controller its own`},
		{"interface, both written", "controllers:\n  - bitrate: 500000\n    interface: {name: can7}\n" + second + "    interface: {name: can7}\n",
			`x.yaml:7:23: controllers[1].interface.name: "can7" is used by controllers[0] too (line 3); each controller needs its own interface`},
		{"interface and a written vxcan peer", "controllers:\n  - bitrate: 500000\n    interface: {name: a, kind: vxcan, peer: b}\n" + second + "    interface: {name: b}\n",
			`x.yaml:7:23: controllers[1].interface.name: "b" is used by controllers[0].interface.peer too (line 3); each controller needs its own interface`},
		{"vxcan peer by default", "controllers:\n  - bitrate: 500000\n    interface: {name: a}\n" + second + "    interface: {name: ap}\n  - bitrate: 500000\n    int_gpio: 23\n    spi: {chip_select: gpio5}\n    interface: {name: a2, kind: vxcan, peer: a2q}\n  - bitrate: 500000\n    int_gpio: 22\n    spi: {chip_select: gpio6}\n    interface: {name: a, kind: vxcan}\n",
			`x.yaml:15:16: controllers[3].interface.peer: "ap" (by default the interface name + "p") is used by controllers[1] too (line 7); each controller needs its own interface` + "\n" +
				`x.yaml:15:23: controllers[3].interface.name: "a" is used by controllers[0] too (line 3); each controller needs its own interface`},
		{"sim peers", "controllers:\n  - bitrate: 500000\n    sim:\n      peers:\n        - {kind: answer, name: p}\n        - {kind: answer, name: p}\n        - {kind: answer, name: answer3}\n        - {kind: answer}\n        - {kind: answer, name: answer0}\n",
			`x.yaml:6:32: controllers[0].sim.peers[1].name: "p" is used by controllers[0].sim.peers[0] too (line 5); give each peer on a bus its own name` + "\n" +
				`x.yaml:8:11: controllers[0].sim.peers[3].name: "answer3" (by default kind and index) is used by controllers[0].sim.peers[2] too (line 7); give each peer on a bus its own name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseErr(t, "x.yaml", tc.src); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	// Peers on different buses may share a name.
	if _, err := Parse("x.yaml", []byte("controllers:\n  - bitrate: 500000\n    sim: {peers: [{kind: answer, name: p}]}\n"+second+"    sim: {peers: [{kind: answer, name: p}]}\n")); err != nil {
		t.Error(err)
	}
}

// Default interface names skip every name the file gives an interface or a vxcan
// peer, and a vxcan pair's default peer name too.
func TestDefaultInterfaceNamesSkipPeers(t *testing.T) {
	c, err := Parse("x.yaml", []byte("controllers:\n"+
		"  - bitrate: 500000\n    interface: {kind: vxcan}\n"+
		"  - bitrate: 500000\n    int_gpio: 24\n    spi: {chip_select: ce1}\n    interface: {name: vcan0p}\n"+
		"  - bitrate: 500000\n    int_gpio: 23\n    spi: {chip_select: gpio5}\n    interface: {name: x, kind: vxcan, peer: vcan1}\n"+
		"  - bitrate: 500000\n    int_gpio: 22\n    spi: {chip_select: gpio6}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ct := range c.Controllers {
		got = append(got, ct.Name+"/"+ct.Interface.Name+"/"+ct.Interface.Peer)
	}
	want := "vcan2/vcan2/vcan2p vcan0p/vcan0p/ x/x/vcan1 vcan0/vcan0/"
	if strings.Join(got, " ") != want {
		t.Errorf("controllers %q, want %q", strings.Join(got, " "), want)
	}
}
