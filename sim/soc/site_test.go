package soc

import (
	"testing"

	"cand/sim/clock"
)

func TestSiteName(t *testing.T) {
	for site, want := range map[uint32]string{
		clock.Site(siteSPI0, 0x04, false): "SPI0+0x04",
		clock.Site(siteGPIO, 0x34, false): "GPIO+0x34",
		clock.Site(siteSPI0, 0x00, true):  "SPI0+0x00 w",
		clock.Site(9, 0x10, false):        "site 0x9000020",
	} {
		if got := SiteName(site); got != want {
			t.Errorf("SiteName(%#x) = %q, want %q", site, got, want)
		}
	}
}
