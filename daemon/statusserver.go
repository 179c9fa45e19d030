package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"time"

	"cand/metrics"
)

// statusPath is where the status document is served on the socket.
const statusPath = "/status"

// statusMode lets the socket's owner (root) and group connect, no one else.
const statusMode = 0o660

// serveStatus serves the status document on the unix socket status.socket (none if
// that is empty) until Run returns, and sets StatusSocket. The socket is mode 0660,
// owned by the daemon's user and by status.group.
func (w *wiring) serveStatus() error {
	path := *w.cfg.Status.Socket
	if path == "" {
		return nil
	}
	ln, err := listenStatus(path, w.cfg.Status.Group)
	if err != nil {
		return err
	}
	w.StatusSocket = path
	sources := w.sources
	ms := make([]*metrics.Controller, len(sources))
	for i := range sources {
		ms[i] = sources[i].m
	}
	meter := newLoadMeter(ms, w.hw.seenClock())
	ctx, cancel := context.WithCancel(context.Background())
	go meter.run(ctx, busLoadInterval)
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+statusPath, func(rw http.ResponseWriter, _ *http.Request) {
		st := Status{SchemaVersion: StatusSchemaVersion, Version: w.opt.Version, ClockSource: string(w.hw.clockSource().name),
			Controllers: []ControllerStatus{}}
		for i := range sources {
			st.Controllers = append(st.Controllers, sources[i].read(meter.load(i)))
		}
		rw.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(rw)
		enc.SetIndent("", "  ")
		enc.Encode(&st)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			w.log.Error("status server", "err", err)
		}
	}()
	w.cleanups = append(w.cleanups, func() {
		cancel()
		srv.Close()
	})
	return nil
}

// listenStatus listens on the unix socket path, mode 0660, its group set to group
// ("": the daemon's own). A socket left by a daemon that is gone is replaced; one
// another daemon still serves is not.
func listenStatus(path, group string) (net.Listener, error) {
	gid := -1
	if group != "" {
		g, err := user.LookupGroup(group)
		var unknown user.UnknownGroupError
		switch {
		case errors.As(err, &unknown):
			return nil, fmt.Errorf("status.group: group %q does not exist: create it (groupadd %s) or set status.group to an existing group, or to \"\" for the daemon's own", group, group)
		case err != nil:
			return nil, fmt.Errorf("status.group: looking up group %q: %w", group, err)
		}
		if gid, err = strconv.Atoi(g.Gid); err != nil {
			return nil, fmt.Errorf("status.group: group %q has gid %q, not a number", group, g.Gid)
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("status: cannot create %s for the status socket: %w (under systemd, RuntimeDirectory=cand creates /run/cand; or set status.socket to a writable path, or to \"\" to turn it off)", dir, err)
	}
	if err := removeStale(path); err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("status: cannot listen on %s: %w (set status.socket to a writable path, or to \"\" to turn it off)", path, err)
	}
	if err := os.Chmod(path, statusMode); err != nil {
		ln.Close()
		return nil, fmt.Errorf("status: %w", err)
	}
	if gid >= 0 {
		if err := os.Chown(path, -1, gid); err != nil {
			ln.Close()
			return nil, fmt.Errorf("status: giving %s to group %s: %w (cand must run as root or as a member of the group)", path, group, err)
		}
	}
	return ln, nil
}

// removeStale removes a socket at path that no daemon serves any more.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("status: %w", err)
	case fi.Mode().Type() != fs.ModeSocket:
		return fmt.Errorf("status: %s exists and is not a socket: remove it, or set status.socket to another path", path)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("status: another cand serves %s: stop it, or give this one another status.socket", path)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("status: removing the stale socket: %w", err)
	}
	return nil
}
