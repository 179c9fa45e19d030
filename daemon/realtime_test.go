package daemon

import (
	"bytes"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"

	"cand/config"
	"cand/metrics"
)

// A refused real-time setting is logged as a warning and shows in
// cand_realtime_refused; with realtime.required it is instead the error that stops
// the start-up, naming what was refused and the fix. CPU 1023 is refused on any machine with fewer CPUs.
func TestRealtimeRefused(t *testing.T) {
	if runtime.NumCPU() > 1023 {
		t.Skip("CPU 1023 exists here: nothing refuses the pin")
	}
	const refusal = "owner thread: pinning to CPU 1023 refused (EINVAL): CPU 1023 is offline, absent or outside this process's cpuset; choose another realtime.cpu"
	for _, tc := range []struct {
		required         bool
		wantLog, wantErr string
	}{
		{false, "level=INFO msg=\"owner thread: normal scheduling (realtime.priority 0)\"\n" +
			"level=WARN msg=\"" + refusal + "; running unpinned\" setting=affinity\n", ""},
		{true, "level=INFO msg=\"owner thread: normal scheduling (realtime.priority 0)\"\n",
			"rt: realtime.required is true, but " + refusal + " (or set realtime.required: false to start without)"},
	} {
		src := fmt.Sprintf("realtime: {priority: 0, cpu: 1023, mlockall: false, required: %v}\ncontrollers:\n  - bitrate: 500000\n", tc.required)
		cfg, err := config.Parse("test.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		var logged bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
		w := &wiring{Daemon: &Daemon{Metrics: metrics.New("test")}, cfg: cfg, log: log}
		refused := w.Metrics.AddRealtime()
		errc := make(chan error)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			errc <- w.setupRealtime(refused)
		}()
		err = <-errc
		if got := errText(err); got != tc.wantErr {
			t.Errorf("required %v: error %q\nwant %q", tc.required, got, tc.wantErr)
		}
		if logged.String() != tc.wantLog {
			t.Errorf("required %v: log\n%s\nwant\n%s", tc.required, logged.String(), tc.wantLog)
		}
		if got, want := refusedGauges(t, w.Metrics), "affinity=1 mlockall=0 sched_fifo=0"; got != want {
			t.Errorf("required %v: cand_realtime_refused %s, want %s", tc.required, got, want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// refusedGauges is cand_realtime_refused as "setting=value ...", by setting.
func refusedGauges(t *testing.T, r *metrics.Registry) string {
	t.Helper()
	fams, err := r.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range fams {
		if f.GetName() != "cand_realtime_refused" {
			continue
		}
		for _, m := range f.GetMetric() {
			out = append(out, fmt.Sprintf("%s=%g", m.GetLabel()[0].GetValue(), m.GetGauge().GetValue()))
		}
	}
	return strings.Join(out, " ")
}
