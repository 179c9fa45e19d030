package config

import (
	"strings"
	"testing"
)

// status.socket and status.group are kept as written; "" turns the socket off.
func TestStatusKeys(t *testing.T) {
	for _, tc := range []struct {
		src, socket, group string
	}{
		{"", DefaultStatusSocket, ""},
		{"status:\n  socket:\n", DefaultStatusSocket, ""},
		{"status: {socket: \"\"}\n", "", ""},
		{"status: {socket: /tmp/x/cand.sock, group: candstatus}\n", "/tmp/x/cand.sock", "candstatus"},
	} {
		c, err := Parse("x.yaml", []byte(tc.src+ok500))
		if err != nil {
			t.Errorf("%q: %v", tc.src, err)
			continue
		}
		if *c.Status.Socket != tc.socket || c.Status.Group != tc.group {
			t.Errorf("%q: socket %q group %q, want %q %q", tc.src, *c.Status.Socket, c.Status.Group, tc.socket, tc.group)
		}
	}
}

func TestStatusKeysRejected(t *testing.T) {
	long := "/" + strings.Repeat("x", 107)
	for _, tc := range []struct{ src, want string }{
		{"status: {socket: run/cand.sock}\n",
			`x.yaml:1:18: status.socket: "run/cand.sock" is not an absolute path; write e.g. /run/cand/status.sock, or "" to turn the status socket off`},
		{"status: {socket: " + long + "}\n",
			"x.yaml:1:18: status.socket: 108 characters: a unix socket path has at most 107"},
		{"status: {group: \"can:status\"}\n",
			`x.yaml:1:17: status.group: "can:status" is not a group name: it may not contain ':', '/' or white space`},
	} {
		_, err := Parse("x.yaml", []byte(tc.src+ok500))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.src, err, tc.want)
		}
	}
}
