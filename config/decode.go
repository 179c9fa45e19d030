package config

import (
	"encoding"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// pos is a place in the file, 1-based.
type pos struct{ line, col int }

func posOf(n *yaml.Node) pos { return pos{n.Line, n.Column} }

// maxNodes bounds the values and keys one file may expand to: aliases can make a
// small file name the same mapping millions of times. With it, and the problems
// kept bounded (maxFound), checking a file costs at most a few times maxNodes.
const maxNodes = 100_000

// decoder fills the schema's Go values from a yaml.v3 node tree by reflection,
// strictly (unknown and duplicate keys, wrong types and unknown enum values are
// problems), and remembers where each key path was written so that defaults can
// tell "absent" from "0" and validation can point at the line.
type decoder struct {
	*problems
	at     map[string]pos  // key path → position of its value ("" = the document)
	bad    map[string]bool // key paths whose value could not be decoded
	budget int
}

func newDecoder(ps *problems) *decoder {
	return &decoder{problems: ps, at: map[string]pos{}, bad: map[string]bool{}, budget: maxNodes}
}

// enum is implemented by the schema's string enumerations.
type enum interface{ choices() []string }

var durationType = reflect.TypeFor[Duration]()

// decode stores n into v. A null value (`key:` or `key: ~`) leaves v alone and the
// key unrecorded: it means "not set".
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	if !d.spend(n, path) {
		return
	}
	here := posOf(n)
	for depth := 0; n.Kind == yaml.AliasNode; depth++ {
		if n.Alias == nil || depth > 64 {
			d.errorf(here, path, "alias *%s names no value; define the anchor &%s first", n.Value, n.Value)
			d.bad[path] = true
			return
		}
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	d.at[path] = here
	if !d.value(n, v, path, here) {
		d.bad[path] = true
	}
}

// spend takes one value or key from the budget; false, with one problem, once
// the budget is spent.
func (d *decoder) spend(n *yaml.Node, path string) bool {
	d.budget--
	if d.budget == -1 {
		d.errorf(posOf(n), path, "the file holds, or expands to through aliases, more than %d values and keys; simplify it", maxNodes)
	}
	return d.budget >= 0
}

func (d *decoder) value(n *yaml.Node, v reflect.Value, path string, here pos) bool {
	if v.Type() == durationType {
		s, ok := d.scalar(n, path, here, "a duration such as 20us, 1.5ms, 1s")
		if !ok {
			return false
		}
		dur, err := time.ParseDuration(s)
		if err != nil {
			d.errorf(here, path, "%s is not a duration; write e.g. 20us, 1.5ms, 1s", quote(s))
			return false
		}
		v.SetInt(int64(dur))
		return true
	}
	// A schema type that parses itself (pinout.ChipSelect) reads a string; its
	// error is the message, naming the value and what to write instead.
	if t, ok := textValue(v); ok {
		s, ok := d.scalar(n, path, here, "a string")
		if !ok {
			return false
		}
		if err := t.UnmarshalText([]byte(s)); err != nil {
			d.errorf(here, path, "%s", err)
			return false
		}
		return true
	}
	switch v.Kind() {
	case reflect.Pointer:
		nv := reflect.New(v.Type().Elem())
		if !d.value(n, nv.Elem(), path, here) {
			return false
		}
		v.Set(nv)
		return true
	case reflect.Struct:
		return d.mapping(n, v, path, here)
	case reflect.Slice:
		return d.sequence(n, v, path, here)
	case reflect.String:
		s, ok := d.scalar(n, path, here, "a string")
		if !ok {
			return false
		}
		if e, isEnum := v.Interface().(enum); isEnum && !contains(e.choices(), s) {
			msg := "%s is not allowed; allowed: %s"
			if c := closest(s, e.choices()); c != "" {
				msg = "%s is not allowed (did you mean " + c + "?); allowed: %s"
			}
			d.errorf(here, path, msg, quote(s), strings.Join(e.choices(), ", "))
			return false
		}
		v.SetString(s)
		return true
	case reflect.Bool:
		s, ok := d.unquoted(n, path, here, "true or false")
		if !ok {
			return false
		}
		switch s {
		case "true", "True", "TRUE":
			v.SetBool(true)
		case "false", "False", "FALSE":
			v.SetBool(false)
		default:
			d.errorf(here, path, "%s is not a boolean; write true or false", quote(s))
			return false
		}
		return true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s, ok := d.unquoted(n, path, here, "an integer")
		if !ok {
			return false
		}
		i, err := parseInt(s)
		lo, hi := int64(-1)<<(v.Type().Bits()-1), int64(1)<<(v.Type().Bits()-1)-1
		if err != nil {
			d.errorf(here, path, "%s is not an integer; write e.g. 25 or 0x19", quote(s))
			return false
		}
		if i < lo || i > hi {
			d.errorf(here, path, "%s is out of range: allowed %d..%d", s, lo, hi)
			return false
		}
		v.SetInt(i)
		return true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s, ok := d.unquoted(n, path, here, "an integer")
		if !ok {
			return false
		}
		i, err := parseInt(s)
		hi := uint64(1)<<v.Type().Bits() - 1
		if err != nil {
			d.errorf(here, path, "%s is not an integer; write e.g. 500000 or 0x7FF", quote(s))
			return false
		}
		if i < 0 || uint64(i) > hi {
			d.errorf(here, path, "%s is out of range: allowed 0..%d", s, hi)
			return false
		}
		v.SetUint(uint64(i))
		return true
	case reflect.Float32, reflect.Float64:
		s, ok := d.unquoted(n, path, here, "a number")
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(s, "xXpP") {
			d.errorf(here, path, "%s is not a number; write e.g. 0.875", quote(s))
			return false
		}
		v.SetFloat(f)
		return true
	}
	d.errorf(here, path, "cannot hold a value (schema type %s); report this as a bug", v.Type())
	return false
}

// textValue returns v as a TextUnmarshaler when its type parses itself.
func textValue(v reflect.Value) (encoding.TextUnmarshaler, bool) {
	if !v.CanAddr() {
		return nil, false
	}
	t, ok := v.Addr().Interface().(encoding.TextUnmarshaler)
	return t, ok
}

// mapping decodes a YAML mapping into the struct v by the fields' yaml tags.
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string, here pos) bool {
	t := v.Type()
	var names []string
	index := map[string]int{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name == "" || name == "-" || !t.Field(i).IsExported() {
			continue
		}
		names = append(names, name)
		index[name] = i
	}
	allowed := strings.Join(names, ", ")
	if n.Kind != yaml.MappingNode {
		d.errorf(here, path, "expected a mapping with keys %s; got %s", allowed, describe(n))
		return false
	}
	seen := map[string]pos{}
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if !d.spend(k, path) {
			return false
		}
		at := posOf(k)
		if k.Kind != yaml.ScalarNode {
			d.errorf(at, path, "a key must be a plain word; allowed keys: %s", allowed)
			ok = false
			continue
		}
		// A key longer than any the schema has is unknown: its path is shortened
		// for the messages.
		kp := join(path, clip(k.Value))
		if k.Value == "<<" {
			d.errorf(at, kp, "merge keys (<<) are not supported; write the keys out")
			ok = false
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.errorf(at, kp, "duplicate key; already given at line %d; keep one", first.line)
			d.bad[kp] = true
			continue
		}
		seen[k.Value] = at
		f, known := index[k.Value]
		if !known {
			if d.full() {
				d.errorf(at, kp, "unknown key") // only counted
			} else if c := closest(k.Value, names); c != "" {
				d.errorf(at, kp, "unknown key; did you mean %s? allowed keys: %s", c, allowed)
			} else {
				d.errorf(at, kp, "unknown key; allowed keys: %s", allowed)
			}
			continue
		}
		d.decode(val, v.Field(f), kp)
	}
	return ok
}

// sequence decodes a YAML list into the slice v.
func (d *decoder) sequence(n *yaml.Node, v reflect.Value, path string, here pos) bool {
	if n.Kind != yaml.SequenceNode {
		d.errorf(here, path, "expected a list (\"- item\" lines, or [a, b]); got %s", describe(n))
		return false
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.decode(item, s.Index(i), path+"["+strconv.Itoa(i)+"]")
		if d.budget < 0 { // the rest is not looked at: keep no undecoded items
			v.Set(s.Slice(0, i+1))
			return false
		}
	}
	v.Set(s)
	return true
}

// scalar returns a scalar's text, or reports what was expected.
func (d *decoder) scalar(n *yaml.Node, path string, here pos, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(here, path, "expected %s; got %s", want, describe(n))
		return "", false
	}
	return n.Value, true
}

// unquoted is scalar for numbers and booleans: a quoted value is a string.
func (d *decoder) unquoted(n *yaml.Node, path string, here pos, want string) (string, bool) {
	s, ok := d.scalar(n, path, here, want)
	if ok && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		d.errorf(here, path, "%s is a quoted string; expected %s: remove the quotes", quote(s), want)
		return "", false
	}
	return s, ok
}

// parseInt reads decimal, 0x hex, 0o octal and 0b binary, with _ separators. A
// leading 0 does not make octal: 010 is ten.
func parseInt(s string) (int64, error) {
	t := strings.TrimLeft(s, "+-")
	if len(t) > 1 && t[0] == '0' && t[1] >= '0' && t[1] <= '9' {
		return strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
	}
	return strconv.ParseInt(s, 0, 64)
}

// describe names what a node is, for "expected X; got Y".
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping (key: value lines)"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return quote(n.Value)
	}
	return "nothing"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
