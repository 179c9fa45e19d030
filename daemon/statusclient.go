package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os/user"
	"strconv"
	"syscall"
)

// ErrNoDaemon is FetchStatus's error when no daemon serves the socket: it does
// not exist, or nothing listens on it.
var ErrNoDaemon = errors.New("no daemon")

// FetchStatus asks the daemon serving the unix socket at path for its status,
// and returns it decoded and as the daemon sent it. The error is ErrNoDaemon when
// no daemon serves path, and matches fs.ErrPermission when the caller may not
// connect (see SocketGroup).
func FetchStatus(ctx context.Context, path string) (*Status, []byte, error) {
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
	}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://cand"+statusPath, nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, nil, fmt.Errorf("%w at %s", ErrNoDaemon, path)
		}
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the status from %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, raw, fmt.Errorf("%s answered %s", path, resp.Status)
	}
	var st Status
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, raw, fmt.Errorf("the status from %s is not a status document: %w", path, err)
	}
	return &st, raw, nil
}

// SocketGroup returns the name of the group that owns the socket at path (its
// gid if the name is unknown), or "" if path cannot be looked at.
func SocketGroup(path string) string {
	gid, ok := fileGID(path)
	if !ok {
		return ""
	}
	id := strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(id); err == nil {
		return g.Name
	}
	return id
}

func fileGID(path string) (uint32, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, false
	}
	return st.Gid, true
}
