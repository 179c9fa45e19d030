package main

import (
	"strings"
	"testing"
)

func TestReadScrape(t *testing.T) {
	in := `# HELP cand_tx_frames_total CAN frames read from the SocketCAN interface and transmitted on the bus.
# TYPE cand_tx_frames_total counter
cand_tx_frames_total{controller="can0",interface="vcan0"} 1000
cand_tx_frames_total{controller="can1",interface="vcan1"} 7 1700000000000
cand_sim_peer_dropped_total{controller="can0",peer="echo"} 2
cand_sim_peer_dropped_total{controller="can0",peer="other"} 3
cand_info{version="a \"b\" \\c\nd"} 1
cand_up 1e+00

`
	s, err := readScrape(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		match map[string]string
		want  float64
		found bool
	}{
		{"cand_tx_frames_total", map[string]string{"interface": "vcan0"}, 1000, true},
		{"cand_tx_frames_total", map[string]string{"interface": "vcan1"}, 7, true},
		{"cand_tx_frames_total", nil, 1007, true},
		{"cand_tx_frames_total", map[string]string{"interface": "vcan2"}, 0, false},
		{"cand_sim_peer_dropped_total", map[string]string{"controller": "can0"}, 5, true},
		{"cand_info", map[string]string{"version": "a \"b\" \\c\nd"}, 1, true},
		{"cand_up", nil, 1, true},
		{"cand_missing_total", nil, 0, false},
	} {
		if v, ok := s.value(tc.name, tc.match); v != tc.want || ok != tc.found {
			t.Errorf("value(%s, %v) = %v, %v; want %v, %v", tc.name, tc.match, v, ok, tc.want, tc.found)
		}
	}
	if c, ok := s.controllerOf("vcan1"); c != "can1" || !ok {
		t.Errorf("controllerOf(vcan1) = %q, %v", c, ok)
	}
	if _, ok := s.controllerOf("vcan9"); ok {
		t.Error("controllerOf(vcan9) found one")
	}
}

func TestReadScrapeErrors(t *testing.T) {
	for in, want := range map[string]string{
		"cand_x":                   `line 1 "cand_x": no value after the metric name`,
		"cand_x{a=1} 2":            `label without ="value"`,
		`cand_x{a="1} 2`:           "label value without its closing quote",
		`cand_x{a="1\`:             "label value ends in a backslash",
		`cand_x{a="1"} two`:        `value "two" is not a number`,
		`cand_x{a="1"} 1 2 3`:      "want a value and an optional timestamp",
		"# ok\n\ncand_y 1\ncand_z": `line 4 "cand_z"`,
	} {
		_, err := readScrape(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to contain %q", in, err, want)
		}
	}
}
