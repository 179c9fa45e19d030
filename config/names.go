package config

import (
	"fmt"
	"strings"
)

const (
	// nameMax bounds controller and sim peer names: they label every metric series
	// and log line of their controller.
	nameMax   = 32
	ifNameMax = 15 // IFNAMSIZ − 1 (include/uapi/linux/if.h)
)

// nameProblem says why s is not a valid controller or sim peer name (1..nameMax
// ASCII letters, digits, '_', '.' and '-'), or "".
func nameProblem(s string) string {
	if s == "" {
		return "it is empty"
	}
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '.' || r == '-') {
			return fmt.Sprintf("%q is not allowed", r)
		}
	}
	if len(s) > nameMax {
		return fmt.Sprintf("%d characters, at most %d", len(s), nameMax)
	}
	return ""
}

// nameRule is what nameProblem allows, for the messages.
func nameRule() string {
	return fmt.Sprintf("1..%d letters, digits, '_', '.' or '-'", nameMax)
}

// ifNameProblem says why name is not a valid Linux interface name, or "". The
// kernel (dev_valid_name, net/core/dev.c) refuses an empty name, one of IFNAMSIZ
// bytes or more, "." and "..", and '/', ':' and white space; it replaces a '%d'
// with a number of its choosing (dev_get_valid_name), so cand would open another
// interface than the one it created. Beyond the kernel, only printable ASCII is
// allowed, as systemd and udev require (ifname_valid_char, src/basic/socket-util.c):
// the name is a metric label and a log field.
func ifNameProblem(name string) string {
	switch {
	case name == "":
		return "it is empty"
	case name == "." || name == "..":
		return "it is reserved"
	}
	for _, r := range name {
		switch {
		case r == '/' || r == ':' || r == ' ':
			return fmt.Sprintf("%q is not allowed (Linux refuses '/', ':' and white space)", r)
		case r == '%':
			return "'%' is not allowed (the kernel would replace %d with a number of its choosing)"
		case r < ' ' || r > '~':
			return fmt.Sprintf("%q is not allowed: use printable ASCII", r)
		}
	}
	if len(name) > ifNameMax {
		return fmt.Sprintf("%d characters, Linux allows at most %d", len(name), ifNameMax)
	}
	return ""
}

// controllerName checks a controller's name, written or taken from its interface.
func (v checker) controllerName(ct *Controller, p string) {
	why := nameProblem(ct.Name)
	switch {
	case why == "":
	case v.has(p + ".name"):
		v.fail(p+".name", "%s is not a valid name: %s; names label logs and metrics: use %s", quote(ct.Name), why, nameRule())
	case ifNameProblem(ct.Interface.Name) == "": // an invalid interface name is reported as such
		v.fail(p+".name", "%s (by default the interface name) is not a valid name: %s; give the controller a name of %s", quote(ct.Name), why, nameRule())
	}
}

// peerName checks a sim peer's name.
func (v checker) peerName(sp *SimPeer, p string) {
	if why := nameProblem(sp.Name); why != "" {
		v.fail(p+".name", "%s is not a valid name: %s; use %s", quote(sp.Name), why, nameRule())
	}
}

// nameUse is one use of a name: its key path, and how the default makes it when
// the file does not write it ("" when written).
type nameUse struct {
	path, byDefault string
}

// names are the uses of names so far, by name.
type names map[string]nameUse

// unique records u as a use of name and reports at u a clash with an earlier
// use: who names the earlier one's owner from its path; fix says what to do.
func (v checker) unique(seen names, name string, u nameUse, who func(path string) string, fix string) {
	prev, dup := seen[name]
	if !dup {
		seen[name] = u
		return
	}
	this := quote(name)
	if u.byDefault != "" {
		this += " (by default " + u.byDefault + ")"
	}
	at := fmt.Sprintf("line %d", v.where(prev.path).line)
	if prev.byDefault != "" {
		at = "by default " + prev.byDefault + ", " + at
	}
	v.fail(u.path, "%s is used by %s too (%s); %s", this, who(prev.path), at, fix)
}

// uniqueNames checks that controller p's name, interface name and vxcan peer are
// not used before, whether the file wrote them or they are defaults.
func (v checker) uniqueNames(ct *Controller, p string, ctrl, ifaces names) {
	u := nameUse{path: p + ".name"}
	if !v.has(u.path) {
		u.byDefault = "the interface name"
	}
	// Two default names are the interface names, whose clash is reported below.
	if prev, dup := ctrl[ct.Name]; !dup || u.byDefault == "" || prev.byDefault == "" {
		v.unique(ctrl, ct.Name, u, owner, "names label logs and metrics, give each controller its own")
	}
	ifaceOwner := func(path string) string {
		if strings.HasSuffix(path, ".peer") {
			return path // say which end of a vxcan pair
		}
		return owner(path)
	}
	for _, n := range []struct{ name, key, byDefault string }{
		{ct.Interface.Name, ".interface.name", "the lowest free name"},
		{ct.Interface.Peer, ".interface.peer", `the interface name + "p"`},
	} {
		if n.name == "" {
			continue
		}
		u := nameUse{path: p + n.key}
		if !v.has(u.path) {
			u.byDefault = n.byDefault
		}
		v.unique(ifaces, n.name, u, ifaceOwner, "each controller needs its own interface")
	}
}

// uniquePeerNames checks that the sim peers of one bus have names of their own.
func (v checker) uniquePeerNames(peers []SimPeer, p string) {
	seen := names{}
	for i := range peers {
		u := nameUse{path: fmt.Sprintf("%s.sim.peers[%d].name", p, i)}
		if !v.has(u.path) {
			u.byDefault = "kind and index"
		}
		v.unique(seen, peers[i].Name, u, func(path string) string { return strings.TrimSuffix(path, ".name") }, "give each peer on a bus its own name")
	}
}
