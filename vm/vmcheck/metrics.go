package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// sample is one line of the Prometheus text exposition format
// (https://prometheus.io/docs/instrumenting/exposition_formats/):
// name{label="value",...} value [timestamp].
type sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// scrape is one read of cand's /metrics, as init.sh saved it with wget.
type scrape []sample

func readScrapeFile(path string) (scrape, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := readScrape(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return s, nil
}

// readScrape parses the exposition; comments (# HELP, # TYPE) and blank lines are
// skipped, any other line that is not a sample is an error naming the line.
func readScrape(r io.Reader) (scrape, error) {
	var s scrape
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		x, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("line %d %q: %v", n, line, err)
		}
		s = append(s, x)
	}
	return s, sc.Err()
}

func parseSample(line string) (sample, error) {
	x := sample{Labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i <= 0 {
		return x, fmt.Errorf("no value after the metric name")
	}
	x.Name, line = line[:i], line[i:]
	if line[0] == '{' {
		line = line[1:]
		for {
			line = strings.TrimLeft(line, " ,")
			if strings.HasPrefix(line, "}") {
				line = line[1:]
				break
			}
			k, rest, ok := strings.Cut(line, "=\"")
			if !ok || k == "" {
				return x, fmt.Errorf("label without =\"value\"")
			}
			v, rest, err := labelValue(rest)
			if err != nil {
				return x, err
			}
			x.Labels[strings.TrimSpace(k)] = v
			line = rest
		}
	}
	f := strings.Fields(line)
	if len(f) < 1 || len(f) > 2 {
		return x, fmt.Errorf("want a value and an optional timestamp after the labels")
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return x, fmt.Errorf("value %q is not a number", f[0])
	}
	x.Value = v
	return x, nil
}

// labelValue reads a label value up to its closing quote, undoing the escapes
// \\, \" and \n; it returns the value and what follows the quote.
func labelValue(s string) (string, string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), s[i+1:], nil
		case '\\':
			if i+1 == len(s) {
				return "", "", fmt.Errorf("label value ends in a backslash")
			}
			i++
			if s[i] == 'n' {
				b.WriteByte('\n')
			} else {
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", fmt.Errorf("label value without its closing quote")
}

// value sums the samples called name whose labels include all of match; found
// is false when there is none (a metric this cand does not export).
func (s scrape) value(name string, match map[string]string) (v float64, found bool) {
next:
	for _, x := range s {
		if x.Name != name {
			continue
		}
		for k, want := range match {
			if x.Labels[k] != want {
				continue next
			}
		}
		v += x.Value
		found = true
	}
	return v, found
}

// controllerOf is the controller label cand's metrics carry next to interface iface.
func (s scrape) controllerOf(iface string) (string, bool) {
	for _, x := range s {
		if x.Labels["interface"] == iface && x.Labels["controller"] != "" {
			return x.Labels["controller"], true
		}
	}
	return "", false
}
