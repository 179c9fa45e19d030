package bridge

import (
	"testing"
	"time"

	"cand/internal/mono"
	"cand/metrics"
)

// The bus-off restart rule: restart_ms the first time; doubled while bus-off comes
// back within restartWindow of the last restart, up to restartMax; restart_ms again
// once the controller stayed on the bus for restartWindow.
func TestBusOffRestartDelay(t *testing.T) {
	p := &Port{Name: "can0", M: metrics.New("test").AddController("can0", "vcan0"), restartNs: int64(20 * time.Millisecond)}
	delay := func() time.Duration {
		p.busOff = false
		p.enterBusOff()
		return time.Duration(p.restartAt - mono.Now()).Round(10 * time.Millisecond)
	}
	restarted := func(ago time.Duration) { p.restartedAt = mono.Now() - int64(ago) }
	if d := delay(); d != 20*time.Millisecond {
		t.Fatalf("first bus-off: restart in %v, want restart_ms", d)
	}
	var got []time.Duration
	for range 12 {
		restarted(time.Millisecond)
		got = append(got, delay())
	}
	want := []time.Duration{40, 80, 160, 320, 640, 1280, 2560, 5120, 10000, 10000, 10000, 10000}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("delays %v, want %v ms", got, want)
		}
	}
	restarted(time.Duration(restartWindow))
	if d := delay(); d != 20*time.Millisecond {
		t.Fatalf("after a quiet %v: restart in %v, want restart_ms again", time.Duration(restartWindow), d)
	}
	p.restartNs = int64(time.Minute) // longer than restartMax: never doubled
	restarted(time.Millisecond)
	if d := delay(); d != time.Minute {
		t.Fatalf("restart_ms 1m: restart in %v", d)
	}
	if p.M.BusOffs.Load() != 15 {
		t.Fatalf("cand_bus_off_total %d, want 15", p.M.BusOffs.Load())
	}
}
