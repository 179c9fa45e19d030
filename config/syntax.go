package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// emptyFile is the fix for a file without settings.
const emptyFile = "; give at least one controller, e.g.\n  controllers:\n    - bitrate: 500000\n(deploy/cand.yaml is a commented example)"

// readYAML parses data into the node tree of its one document and returns the
// document's root. A file without a document, a syntax error and a second document
// are problems.
func readYAML(name string, data []byte) (*yaml.Node, *Problem) {
	doc, second, err := documents(data)
	switch {
	case err != nil:
		p := syntaxProblem(name, data, err)
		return nil, &p
	case second != nil:
		return nil, &Problem{File: name, Line: second.Line, Message: "a second YAML document starts here; cand reads one: remove this '---' and what follows, or merge it into the first document"}
	case doc == nil || emptyDocument(doc):
		what := "the file is empty"
		if len(bytes.TrimSpace(data)) > 0 {
			what = "the file holds no settings (only comments or document markers)"
		}
		return nil, &Problem{File: name, Message: what + emptyFile}
	}
	return doc.Content[0], nil
}

// documents parses the YAML stream in data: its first document (nil if there is
// none) and the first document after it that is not empty, if any. A panic inside
// the YAML library becomes a syntax error rather than taking the daemon down.
func documents(data []byte) (first, second *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	if !documentMarker(data) { // one document at most: parse it as a string, which is cheaper
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil || doc.Kind == 0 {
			return nil, nil, err
		}
		return &doc, nil, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return first, nil, err
		}
		switch {
		case first == nil:
			first = &doc
		case !emptyDocument(&doc):
			return first, &doc, nil
		}
	}
}

// documentMarker says whether a line of data starts with "---" or "...": only
// such a line can begin a second document (YAML 1.2 §9.1).
func documentMarker(data []byte) bool {
	start := 0
	for _, end := range lineEnds(data) {
		if line := data[start:end]; bytes.HasPrefix(line, []byte("---")) || bytes.HasPrefix(line, []byte("...")) {
			return true
		}
		start = end
	}
	return false
}

// emptyDocument is a document with no content: a lone "---", or comments only.
func emptyDocument(doc *yaml.Node) bool {
	if len(doc.Content) != 1 {
		return true
	}
	n := doc.Content[0]
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null" && n.Value == "" && n.Anchor == ""
}

var yamlLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// syntaxProblem turns yaml.v3's "yaml: line N: message" into a problem at the line
// to fix.
//
// yaml.v3 does not report where it found the problem: N is the line of the
// construct it was in (a mapping begun lines earlier), and for parser errors that
// line counted from 0, so N may be several lines early; without a context it gives
// no line at all (control characters, an unknown anchor). What holds is that the
// problem is not before line N. So the line is found by parsing again: it is the
// first line L, from N on, such that lines 1..L alone fail with the same message.
// Every line before L parses; the file breaks at L.
func syntaxProblem(name string, data []byte, err error) Problem {
	msg, from := err.Error(), 1
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		msg = m[2]
		if n, _ := strconv.Atoi(m[1]); n > 1 {
			from = n
		}
	}
	ends := lineEnds(data)
	failsAt := func(l int) bool {
		_, _, err := documents(data[:ends[l-1]])
		if err == nil {
			return false
		}
		m := yamlLine.FindStringSubmatch(err.Error())
		return m != nil && m[2] == msg
	}
	// Gallop from line N to a failing prefix, then bisect: each parse stops at
	// the error, and the line is mostly within a few of N, so this costs a few
	// parses of the file up to the error.
	n := len(ends)
	from = min(from, n)
	lo, hi := from-1, from // lines 1..lo are taken to parse
	for step := 1; hi < n && !failsAt(hi); step *= 2 {
		lo, hi = hi, min(hi+step, n)
	}
	line := lo + 1 + sort.Search(hi-lo-1, func(i int) bool { return failsAt(lo + 1 + i) })
	text := ""
	if line >= 1 && line <= len(ends) {
		start := 0
		if line > 1 {
			start = ends[line-2]
		}
		text = string(data[start:ends[line-1]])
	}
	return Problem{File: name, Line: line, Message: "YAML syntax: " + msg + syntaxHint(msg, text)}
}

// lineEnds returns the offset just past each line's break (the last line's end
// is len(data)), counting breaks as YAML does: LF, CR, CR LF, NEL, LS and PS
// (YAML 1.1 §4.1.4, which yaml.v3 follows).
func lineEnds(data []byte) []int {
	var ends []int
	for i := 0; i < len(data); i++ {
		switch {
		case data[i] == '\n':
			ends = append(ends, i+1)
		case data[i] == '\r':
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			ends = append(ends, i+1)
		case data[i] == 0xC2 && bytes.HasPrefix(data[i:], []byte("\u0085")):
			i++
			ends = append(ends, i+1)
		case data[i] == 0xE2 && (bytes.HasPrefix(data[i:], []byte("\u2028")) || bytes.HasPrefix(data[i:], []byte("\u2029"))):
			i += 2
			ends = append(ends, i+1)
		}
	}
	if len(ends) == 0 || ends[len(ends)-1] < len(data) {
		ends = append(ends, len(data))
	}
	return ends
}

// syntaxHint is what to do about a YAML syntax error of the kind msg found on the
// line text, or "".
func syntaxHint(msg, text string) string {
	indent := text[:len(text)-len(strings.TrimLeft(text, " \t"))]
	switch msg {
	case "found character that cannot start any token",
		"found a tab character that violates indentation",
		"found a tab character where an indentation space is expected":
		switch {
		case strings.Contains(indent, "\t") || msg != "found character that cannot start any token":
			return "; YAML indents with spaces only: replace the tab with spaces"
		case strings.ContainsAny(text, "@`"):
			return "; a value may not start with @ or `: quote it"
		}
	case "found unexpected end of stream":
		return "; a quoted string starts on this line and is never closed: add the closing quote"
	case "did not find expected ',' or ']'":
		return "; a [ list is not closed: end it with ] and separate its items with commas"
	case "did not find expected ',' or '}'":
		return "; a { mapping is not closed: end it with } and separate its keys with commas"
	case "did not find expected node content":
		return "; a value is missing"
	case "did not find expected key", "did not find expected '-' indicator",
		"block sequence entries are not allowed in this context":
		return "; check the indentation: the keys of one mapping, and the - items of one list, start in the same column"
	case "mapping values are not allowed in this context":
		return "; a value holding \": \" must be quoted, or this line is indented too far"
	case "could not find expected ':'":
		return "; write key: value, or indent a continued value further than its key"
	case "control characters are not allowed":
		return "; remove them (the file must be UTF-8 text)"
	}
	return ""
}
