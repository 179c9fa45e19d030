package config

import (
	"reflect"
	"testing"
	"time"
)

// A file may set each of the metrics endpoint's limits (TestDefaults has their
// defaults).
func TestMetricsLimits(t *testing.T) {
	c, err := Parse("x.yaml", []byte("metrics:\n  web_config: /etc/cand/web.yml\n  max_connections: 2\n  read_timeout: 1s\n  write_timeout: 2s\n  idle_timeout: 250ms\n"+ok500))
	if err != nil {
		t.Fatal(err)
	}
	want := Metrics{Listen: ptr(DefaultMetrics), WebConfig: "/etc/cand/web.yml", MaxConnections: 2,
		ReadTimeout: Duration(time.Second), WriteTimeout: Duration(2 * time.Second), IdleTimeout: Duration(250 * time.Millisecond)}
	if !reflect.DeepEqual(c.Metrics, want) || len(c.Warnings) != 0 {
		t.Errorf("got %+v (warnings %q), want %+v", c.Metrics, c.Warnings, want)
	}
}

func TestMetricsErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"no connections", "metrics: {max_connections: 0}\n" + ok500,
			"x.yaml:1:28: metrics.max_connections: 0 is not allowed: 1..1024 open connections (default 8)"},
		{"too many connections", "metrics: {max_connections: 5000}\n" + ok500,
			"x.yaml:1:28: metrics.max_connections: 5000 is not allowed: 1..1024 open connections (default 8)"},
		{"no read timeout", "metrics: {read_timeout: 0s}\n" + ok500,
			"x.yaml:1:25: metrics.read_timeout: 0s is not allowed: without a timeout a client that never finishes its request would hold a connection for good; give 1ms..5m0s"},
		{"negative write timeout", "metrics: {write_timeout: -1s}\n" + ok500,
			"x.yaml:1:26: metrics.write_timeout: -1s is not allowed: without a timeout a client that never reads its answer would hold a connection for good; give 1ms..5m0s"},
		{"idle timeout too long", "metrics: {idle_timeout: 2h}\n" + ok500,
			"x.yaml:1:25: metrics.idle_timeout: 2h0m0s is not allowed: 1ms..1h0m0s"},
		{"idle timeout too short", "metrics: {idle_timeout: 10us}\n" + ok500,
			"x.yaml:1:25: metrics.idle_timeout: 10µs is not allowed: 1ms..1h0m0s"},
		{"unknown key", "metrics: {max_connection: 4}\n" + ok500,
			"x.yaml:1:11: metrics.max_connection: unknown key; did you mean max_connections? allowed keys: listen, web_config, max_connections, read_timeout, write_timeout, idle_timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseErr(t, "x.yaml", tc.src); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// A web configuration for an endpoint that is off is ignored, with a warning.
func TestMetricsWebConfigWithoutListen(t *testing.T) {
	c, err := Parse("x.yaml", []byte("metrics:\n  listen: \"\"\n  web_config: /etc/cand/web.yml\n"+ok500))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`x.yaml:3:15: metrics.web_config: ignored: the metrics endpoint is off (listen: "")`}
	if !reflect.DeepEqual(c.Warnings, want) {
		t.Errorf("warnings %q, want %q", c.Warnings, want)
	}
}
