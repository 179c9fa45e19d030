package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// maxFuzzConfig bounds the inputs FuzzParse looks at. A configuration is a few KiB;
// Parse's cost grows with the input (seconds for a megabyte of list items), and
// the fuzzer finds more paths in small inputs than in huge ones.
const maxFuzzConfig = 16 << 10

// FuzzParse: any bytes give either a complete Config (every default filled in, a bit
// timing for each controller, names and interfaces unique) or an *Errors whose every
// problem names the file, a position and what is wrong, sorted by position; and the
// same answer on every call.
func FuzzParse(f *testing.F) {
	for _, file := range []string{"../deploy/sim.yaml", "../deploy/cand.yaml"} {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(ok500))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("controllers: [{bitrate: 0x7A120, timing: {cnf1: 1}}, *x]\n"))
	f.Add([]byte("a: &a [1,1,1,1]\nb: &b [*a,*a,*a,*a]\nc: [*b,*b,*b,*b]\ncontrollers: [{bitrate: 500000}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzConfig {
			t.Skipf("%d bytes: larger than any configuration", len(data))
		}
		c, err := Parse("fuzz.yaml", data)
		if (c == nil) == (err == nil) {
			t.Fatalf("Parse returned config %v and error %v", c, err)
		}
		again, err2 := Parse("fuzz.yaml", data)
		if !reflect.DeepEqual(c, again) || fmt.Sprint(err) != fmt.Sprint(err2) {
			t.Fatalf("Parse is not deterministic:\n%v\n%v\nthen\n%v\n%v", c, err, again, err2)
		}
		if err != nil {
			checkProblems(t, "fuzz.yaml", err)
			return
		}
		checkLoaded(t, "fuzz.yaml", c)
	})
}

// checkProblems: err is an *Errors of 1..MaxProblems problems, sorted by position,
// each naming file and saying what is wrong, each a part of the message.
func checkProblems(t *testing.T, file string, err error) {
	t.Helper()
	var e *Errors
	if !errors.As(err, &e) {
		t.Fatalf("error is %T, want *Errors: %v", err, err)
	}
	if len(e.Problems) == 0 || len(e.Problems) > MaxProblems || e.Omitted < 0 {
		t.Fatalf("%d problems, %d omitted: %v", len(e.Problems), e.Omitted, err)
	}
	msg := err.Error()
	for i, p := range e.Problems {
		if p.File != file || strings.TrimSpace(p.Message) == "" || p.Line < 0 || p.Column < 0 || (p.Column > 0 && p.Line == 0) {
			t.Fatalf("problem %d does not say where and what: %#v", i, p)
		}
		if !strings.Contains(msg, p.String()) {
			t.Fatalf("problem %q is not in the message %q", p, msg)
		}
		if i > 0 {
			q := e.Problems[i-1]
			if p.Line < q.Line || (p.Line == q.Line && p.Column < q.Column) {
				t.Fatalf("problems not sorted: %q before %q", q, p)
			}
		}
	}
}

// checkLoaded: what Parse and Load promise about a Config they return.
func checkLoaded(t *testing.T, file string, c *Config) {
	t.Helper()
	if len(c.Controllers) == 0 {
		t.Fatal("no controllers")
	}
	if unset := nilPointers(reflect.ValueOf(*c), "config"); len(unset) > 0 {
		t.Fatalf("defaults not filled in: %v", unset)
	}
	names, ifnames := map[string]int{}, map[string]int{}
	for i, ct := range c.Controllers {
		if _, err := ct.BitTiming(); err != nil {
			t.Fatalf("controllers[%d].BitTiming: %v", i, err)
		}
		if j, dup := names[ct.Name]; dup || ct.Name == "" {
			t.Fatalf("controllers[%d] and [%d] are both named %q", j, i, ct.Name)
		}
		names[ct.Name] = i
		for _, n := range []string{ct.Interface.Name, ct.Interface.Peer} {
			if j, dup := ifnames[n]; dup {
				t.Fatalf("controllers[%d] and [%d] both use interface %q", j, i, n)
			}
			if n != "" {
				ifnames[n] = i
			}
		}
		if ct.Interface.Name == "" {
			t.Fatalf("controllers[%d] has no interface name", i)
		}
	}
	for _, w := range c.Warnings {
		if !strings.HasPrefix(w, file+":") {
			t.Fatalf("warning %q does not name the file", w)
		}
	}
}

// nilPointers lists the nil pointers under v, which Parse leaves nil only for
// Controller.Timing and Controller.Filters (their contents are the file's).
func nilPointers(v reflect.Value, path string) []string {
	var out []string
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return []string{path}
		}
		return nilPointers(v.Elem(), path)
	case reflect.Slice:
		for i := range v.Len() {
			out = append(out, nilPointers(v.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fv, ft := v.Field(i), v.Type().Field(i)
			if !ft.IsExported() {
				continue
			}
			if v.Type() == reflect.TypeFor[Controller]() && (ft.Name == "Timing" || (ft.Name == "Filters" && fv.IsNil())) {
				continue
			}
			out = append(out, nilPointers(fv, path+"."+ft.Name)...)
		}
	}
	return out
}
