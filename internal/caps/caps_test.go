package caps

import (
	"testing"
)

func TestSetNames(t *testing.T) {
	s := Of(NET_ADMIN, SYS_NICE, 40, 63)
	if got, want := s.String(), "CAP_NET_ADMIN,CAP_SYS_NICE,CAP_CHECKPOINT_RESTORE,CAP_63"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if Set(0).String() != "none" || !s.Has(SYS_NICE) || s.Has(SYS_RAWIO) || Set(1<<63).Has(64) {
		t.Error("Has or String(0) wrong")
	}
	if got := Of(SYS_RAWIO, SETPCAP).Caps(); len(got) != 2 || got[0] != SETPCAP || got[1] != SYS_RAWIO {
		t.Errorf("Caps = %v", got)
	}
	for i, n := range names {
		if n[:4] != "CAP_" || (i > 0 && n == names[i-1]) {
			t.Errorf("name %d %q", i, n)
		}
	}
}
