package daemon

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"cand/config"
)

// reloadTagged walks the schema t and calls fn for every field with a `reload`
// tag, with the field's path of Go names ("Controller.Bitrate").
func reloadTagged(t reflect.Type, fn func(path string, f reflect.StructField)) {
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			if _, ok := f.Tag.Lookup("reload"); ok {
				fn(t.Name()+"."+f.Name, f)
			}
			walk(f.Type)
		}
	}
	walk(t)
}

// TestReloadTags: every `reload` tag of the schema has a value reload.go knows,
// on a field the reload compares: "settings" and "chip" on a controller's own
// keys, "endpoint" on the metrics section only, each with a YAML key.
func TestReloadTags(t *testing.T) {
	var n int
	reloadTagged(reflect.TypeFor[config.Config](), func(path string, f reflect.StructField) {
		n++
		c, ok := reloadClassOf(f)
		if !ok {
			t.Errorf("%s: reload tag %q is none of settings, chip, endpoint (daemon/reload.go)", path, f.Tag.Get("reload"))
			return
		}
		if yamlKey(f) == "" {
			t.Errorf("%s: reload tag on a field not read from the file (no yaml key)", path)
		}
		var want string
		switch c {
		case reloadSettings, reloadChip:
			want = "Controller."
		case reloadEndpoint:
			want = "Config.Metrics"
		default:
			t.Errorf("%s: empty reload tag; leave the tag out for a key that needs a restart", path)
			return
		}
		if !strings.HasPrefix(path, want) {
			t.Errorf("%s: reload tag %q: the reload reads it only on %s", path, f.Tag.Get("reload"), want)
		}
	})
	if n == 0 {
		t.Fatal("no reload tags in config.Config: every key would need a restart")
	}
}

// TestReloadDocs: docs/operations.md's table of what a reload applies lists
// exactly the keys the schema tags, by class, and its row of keys that need a
// restart names keys of the schema that have no tag.
func TestReloadDocs(t *testing.T) {
	const doc = "../docs/operations.md"
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Skipf("%s not readable (%v): run from the module's tree", doc, err)
	}
	tagged := map[reloadClass][]string{}
	reloadTagged(reflect.TypeFor[config.Config](), func(_ string, f reflect.StructField) {
		c, _ := reloadClassOf(f)
		tagged[c] = append(tagged[c], yamlKey(f))
	})
	rows := map[reloadClass]string{
		reloadSettings: "| `error_frames`",
		reloadChip:     "| `bitrate`",
		reloadEndpoint: "| `metrics`",
		reloadRestart:  "| anything else",
	}
	for c, start := range rows {
		listed, ok := rowKeys(string(b), start)
		if !ok {
			t.Errorf("%s: no table row starting %q", doc, start)
			continue
		}
		if c == reloadRestart {
			continue
		}
		want := slices.Sorted(slices.Values(tagged[c]))
		if !slices.Equal(listed, want) {
			t.Errorf("%s: row %q lists %v; the schema's reload tags (config/config.go) say %v", doc, start, listed, want)
		}
	}
	// The keys a reload compares: the top level's and a controller's.
	keys := map[string]reloadClass{}
	for _, st := range []reflect.Type{reflect.TypeFor[config.Config](), reflect.TypeFor[config.Controller]()} {
		for i := range st.NumField() {
			if k := yamlKey(st.Field(i)); k != "" {
				keys[k], _ = reloadClassOf(st.Field(i))
			}
		}
	}
	restart, _ := rowKeys(string(b), rows[reloadRestart])
	for _, k := range restart {
		switch c, ok := keys[k]; {
		case !ok:
			t.Errorf("%s: %q, listed as needing a restart, is no key of the schema's top level or of a controller (config/config.go)", doc, k)
		case c != reloadRestart:
			t.Errorf("%s: %q is listed as needing a restart, but its reload tag says it reloads", doc, k)
		}
	}
}

// rowKeys returns the `key`s in the first cell of doc's table row that starts
// with start, sorted; ok is false if there is no such row.
func rowKeys(doc, start string) (keys []string, ok bool) {
	for l := range strings.SplitSeq(doc, "\n") {
		if !strings.HasPrefix(l, start) {
			continue
		}
		for _, m := range backticked.FindAllStringSubmatch(strings.Split(l, "|")[1], -1) {
			keys = append(keys, m[1])
		}
		slices.Sort(keys)
		return keys, true
	}
	return nil, false
}

// backticked is a key written as code in the docs.
var backticked = regexp.MustCompile("`([a-z_]+)`")
