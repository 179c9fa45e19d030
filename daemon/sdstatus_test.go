package daemon

import (
	"testing"
	"time"

	"cand/canstate"
	"cand/internal/sdnotify"
	"cand/metrics"
)

// systemd's STATUS= line: each interface's state as `cand status` names it (or
// "chip missing"), and its frame rates over the interval since the last sample.
func TestSDStatusLine(t *testing.T) {
	reg := metrics.New("test")
	a, b := reg.AddController("a", "can0"), reg.AddController("b", "can1")
	a.ChipUp.Set(1)
	a.LinkUp.Set(1)
	b.LinkUp.Set(1)
	s := newSDStatus(sdnotify.Notifier{}, []statusSource{{m: a}, {m: b}})
	if want := "can0 ERROR-ACTIVE rx 0/s tx 0/s; can1 chip missing rx 0/s tx 0/s"; s.line != want {
		t.Fatalf("first line %q, want %q", s.line, want)
	}
	t0 := s.at
	a.RXFrames.Add(8125)
	a.TXFrames.Add(31)
	a.BusState.Set(int64(canstate.ErrorPassive))
	if got, want := s.sample(t0.Add(10*time.Second)), "can0 ERROR-PASSIVE rx 812/s tx 3/s; can1 chip missing rx 0/s tx 0/s"; got != want {
		t.Fatalf("line %q, want %q", got, want)
	}
	a.LinkUp.Set(0)
	b.ChipUp.Set(1)
	b.RXFrames.Add(50)
	b.BusState.Set(int64(canstate.BusOff))
	if got, want := s.sample(t0.Add(15*time.Second)), "can0 STOPPED rx 0/s tx 0/s; can1 BUS-OFF rx 10/s tx 0/s"; got != want {
		t.Fatalf("line %q, want %q", got, want)
	}
}

// READY=1 carries the line, in one notification.
func TestSDStatusReady(t *testing.T) {
	sock := listenReady(t)
	reg := metrics.New("test")
	a := reg.AddController("a", "can0")
	a.ChipUp.Set(1)
	a.LinkUp.Set(1)
	newSDStatus(sdnotify.FromEnv(), []statusSource{{m: a}}).ready()
	sock.expect("READY=1\nSTATUS=can0 ERROR-ACTIVE rx 0/s tx 0/s")
}
