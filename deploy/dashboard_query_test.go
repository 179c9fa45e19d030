package deploy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.einride.tech/can"
	"golang.org/x/sys/unix"

	"cand/daemon/daemontest"
	"cand/internal/promtest"
	"cand/socketcan"
)

// Every query of the dashboard returns data from a real Prometheus server that
// scrapes cand on the virtual Pi with traffic both ways: controller can0 (the
// dashboard's $controller in these tests) receives a periodic peer's frames and
// sends frames the answering peer echoes.
func TestDashboardQueriesReturnData(t *testing.T) {
	bin := promtest.Tool(t, "prometheus")
	d := daemontest.Start(t, `hardware: {backend: sim}
realtime: {priority: 0, mlockall: false}
status: {socket: ""}
controllers:
  - name: can0
    bitrate: 500000
    interface: {name: vcan0}
    sim:
      peers:
        - {kind: periodic, name: p, ids: [0x100], period: 5ms, dlc: 8}
        - {kind: answer, name: echo}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	host := d.Host[0]
	unix.SetsockoptTimeval(host, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 100_000})
	traffic := make(chan struct{})
	defer func() { cancel(); <-traffic }()
	go func() {
		defer close(traffic)
		var out, in [socketcan.FrameSize]byte
		for i := 0; ctx.Err() == nil; i++ {
			socketcan.Encode(&out, can.Frame{ID: 0x200, Length: 4, Data: can.Data{byte(i), byte(i >> 8)}})
			unix.Write(host, out[:])
			for range 4 { // what cand writes, as candump would read it
				unix.Read(host, in[:])
			}
		}
	}()
	prom, err := promtest.Start(ctx, t, bin, d.MetricsAddr)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range queryPanels(loadDashboard(t).Panels) {
		for _, tg := range p.Targets {
			expr, err := substitute(tg.Expr)
			if err != nil {
				t.Errorf("panel %d target %s: %v", p.ID, tg.RefID, err)
				continue
			}
			where := fmt.Sprintf("panel %d %q target %s", p.ID, p.Title, tg.RefID)
			if _, err := prom.Values(ctx, expr); err != nil {
				t.Errorf("%s: %v", where, err)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("the dashboard has no queries")
	}
	t.Logf("%d queries returned data", n)
}
