package config

import (
	"strings"
	"testing"
)

// interface.netns and interface.remove_on_exit: parsed once, into a path or a
// PID; refused where there is no pair to place.
func TestInterfaceLifecycleKeys(t *testing.T) {
	c, err := Parse("x.yaml", []byte("controllers:\n"+
		"  - bitrate: 500000\n    interface: {name: can0, kind: vxcan, netns: /run/netns/app, remove_on_exit: true}\n"+
		"  - bitrate: 500000\n    int_gpio: 24\n    spi: {chip_select: ce1}\n    interface: {name: can1, kind: vxcan, netns: 4242}\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := c.Controllers[0].Interface, c.Controllers[1].Interface
	if a.NetNS != (NetNS{Path: "/run/netns/app"}) || !a.RemoveOnExit || a.Peer != "can0p" {
		t.Errorf("controllers[0].interface = %+v", a)
	}
	if b.NetNS != (NetNS{PID: 4242}) || b.RemoveOnExit || b.NetNS.IsZero() {
		t.Errorf("controllers[1].interface = %+v", b)
	}
	c, err = Parse("x.yaml", []byte(ok500))
	if err != nil || !c.Controllers[0].Interface.NetNS.IsZero() || c.Controllers[0].Interface.RemoveOnExit {
		t.Errorf("defaults: %+v, %v; want cand's namespace, kept at exit", c.Controllers[0].Interface, err)
	}
}

func TestInterfaceLifecycleErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"netns on vcan", "controllers:\n  - bitrate: 500000\n    interface: {netns: /run/netns/app}\n",
			"x.yaml:3:24: controllers[0].interface.netns: only a vxcan pair can reach another network namespace: its applications' end (interface.name) is created there; remove netns or set kind: vxcan"},
		{"netns relative", "controllers:\n  - bitrate: 500000\n    interface: {kind: vxcan, netns: app}\n",
			`x.yaml:3:37: controllers[0].interface.netns: "app" is not a network namespace: write a namespace file's absolute path (/run/netns/NAME) or a process ID`},
		{"netns pid 0", "controllers:\n  - bitrate: 500000\n    interface: {kind: vxcan, netns: 0}\n",
			`x.yaml:3:37: controllers[0].interface.netns: "0" is not a network namespace: write a namespace file's absolute path (/run/netns/NAME) or a process ID`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tc.yaml))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
	c, err := Parse("x.yaml", []byte("socketcand: {enabled: true}\ncontrollers:\n  - bitrate: 500000\n    interface: {kind: none, remove_on_exit: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "controllers[0].interface.remove_on_exit: ignored: with kind none there is no interface to remove"; len(c.Warnings) != 1 || !strings.HasSuffix(c.Warnings[0], want) {
		t.Errorf("warnings %q, want one ending %q", c.Warnings, want)
	}
}

// interface.kind slcan: the bitrate must be one of the kernel slcan's rates
// (set on the netdev at start); remove_on_exit and on_delete: exit mean nothing.
func TestInterfaceKindSLCAN(t *testing.T) {
	c, err := Parse("x.yaml", []byte("controllers:\n  - bitrate: 250000\n    interface: {name: can0, kind: slcan, remove_on_exit: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Controllers[0].Interface.Kind != KindSLCAN {
		t.Errorf("kind %q", c.Controllers[0].Interface.Kind)
	}
	if want := "controllers[0].interface.remove_on_exit: ignored: a slcan interface always goes when cand stops (it lives as long as cand holds its pseudo-terminal)"; len(c.Warnings) != 1 || !strings.HasSuffix(c.Warnings[0], want) {
		t.Errorf("warnings %q, want one ending %q", c.Warnings, want)
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"rate not in slcan's list", "controllers:\n  - bitrate: 83333\n    interface: {kind: slcan}\n",
			"x.yaml:2:14: controllers[0].bitrate: 83333 is not a bitrate a slcan interface can have: the kernel's slcan takes only 10000, 20000, 50000, 100000, 125000, 250000, 500000, 800000, 1000000; choose one of them, or use kind vcan or vxcan"},
		{"unknown kind", "controllers:\n  - bitrate: 500000\n    interface: {kind: slcn}\n",
			"x.yaml:3:23: controllers[0].interface.kind: \"slcn\" is not allowed (did you mean slcan?); allowed: vcan, vxcan, slcan, none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tc.yaml))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}
