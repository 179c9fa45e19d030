package config

import (
	"errors"
	"slices"
	"testing"
)

// A YAML syntax error is reported at the line a person would fix, with what to do.
// yaml.v3 itself names a line of the enclosing construct, for parser errors
// counted from 0: the "yaml:" column below is its message, for comparison.
func TestSyntaxErrorLine(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		yaml      string // yaml.v3's own message, for the record
		want      string
	}{
		{"unclosed double quote",
			"hardware:\n  backend: sim\ncontrollers:\n  - name: \"abc\n    bitrate: 500000\n",
			"yaml: line 4: found unexpected end of stream",
			"x.yaml:4: YAML syntax: found unexpected end of stream; a quoted string starts on this line and is never closed: add the closing quote"},
		{"unclosed single quote at the end",
			"controllers:\n  - bitrate: 500000\n    name: 'abc\n",
			"yaml: line 3: found unexpected end of stream",
			"x.yaml:3: YAML syntax: found unexpected end of stream; a quoted string starts on this line and is never closed: add the closing quote"},
		{"key indented too far",
			"hardware:\n  backend: sim\ncontrollers:\n  - name: a\n     bitrate: 500000\n",
			"yaml: line 5: mapping values are not allowed in this context",
			"x.yaml:5: YAML syntax: mapping values are not allowed in this context; a value holding \": \" must be quoted, or this line is indented too far"},
		{"key indented too little",
			"hardware:\n  backend: sim\n gpio_chip: /dev/gpiochip0\ncontrollers:\n  - bitrate: 500000\n",
			"yaml: line 2: did not find expected key",
			"x.yaml:3: YAML syntax: did not find expected key; check the indentation: the keys of one mapping, and the - items of one list, start in the same column"},
		{"key between two indentations",
			"controllers:\n  - bitrate: 500000\n    interface:\n      name: vcan0\n    one_shot: true\n   mode: normal\n",
			"yaml: line 1: did not find expected '-' indicator",
			"x.yaml:6: YAML syntax: did not find expected '-' indicator; check the indentation: the keys of one mapping, and the - items of one list, start in the same column"},
		{"list item indented too little",
			"controllers:\n  - bitrate: 1\n - bitrate: 2\n",
			"yaml: line 2: did not find expected key",
			"x.yaml:3: YAML syntax: did not find expected key; check the indentation: the keys of one mapping, and the - items of one list, start in the same column"},
		{"tab indentation",
			"hardware:\n\tbackend: sim\ncontrollers:\n  - bitrate: 500000\n",
			"yaml: line 2: found character that cannot start any token",
			"x.yaml:2: YAML syntax: found character that cannot start any token; YAML indents with spaces only: replace the tab with spaces"},
		{"tab after a value",
			"hardware:\n  backend: sim\ncontrollers:\n  - bitrate: 500000\n\t  mode: normal\n",
			"yaml: line 4: found a tab character that violates indentation",
			"x.yaml:5: YAML syntax: found a tab character that violates indentation; YAML indents with spaces only: replace the tab with spaces"},
		{"unclosed flow sequence",
			"hardware:\n  backend: sim\ncontrollers: [{bitrate: 500000}\nmetrics:\n  listen: \":9108\"\n",
			"yaml: line 2: did not find expected ',' or ']'",
			"x.yaml:3: YAML syntax: did not find expected ',' or ']'; a [ list is not closed: end it with ] and separate its items with commas"},
		{"unclosed flow sequence deeper",
			"controllers:\n  - bitrate: 500000\n    sim:\n      peers:\n        - kind: periodic\n          ids: [1, 2\n          period: 1s\n",
			"yaml: line 5: did not find expected ',' or ']'",
			"x.yaml:6: YAML syntax: did not find expected ',' or ']'; a [ list is not closed: end it with ] and separate its items with commas"},
		{"unclosed flow mapping",
			"controllers:\n  - bitrate: 500000\n    interface: {name: vcan0\n    mode: normal\n",
			"yaml: line 2: did not find expected ',' or '}'",
			"x.yaml:3: YAML syntax: did not find expected ',' or '}'; a { mapping is not closed: end it with } and separate its keys with commas"},
		{"value with a colon",
			"controllers:\n  - bitrate: 500000\n    mode: listen: only\n",
			"yaml: line 3: mapping values are not allowed in this context",
			"x.yaml:3: YAML syntax: mapping values are not allowed in this context; a value holding \": \" must be quoted, or this line is indented too far"},
		{"key without colon",
			"controllers:\n  - bitrate: 500000\n    one_shot\n    mode: normal\n",
			"yaml: line 3: could not find expected ':'",
			"x.yaml:3: YAML syntax: could not find expected ':'; write key: value, or indent a continued value further than its key"},
		{"unknown anchor",
			"controllers:\n  - bitrate: 500000\n  - bitrate: *rate\n",
			"yaml: unknown anchor 'rate' referenced",
			"x.yaml:3: YAML syntax: unknown anchor 'rate' referenced"},
		{"control character",
			"controllers:\n  - bitrate: 500000\n    name: \"a\x01\"\n",
			"yaml: control characters are not allowed",
			"x.yaml:3: YAML syntax: control characters are not allowed; remove them (the file must be UTF-8 text)"},
		{"CR line ends",
			"controllers:\r  - bitrate: 500000\r - bitrate: 1\r",
			"yaml: line 2: did not find expected key",
			"x.yaml:3: YAML syntax: did not find expected key; check the indentation: the keys of one mapping, and the - items of one list, start in the same column"},
		{"error in the second document",
			"controllers:\n  - bitrate: 500000\n---\nb: [\n",
			"",
			"x.yaml:4: YAML syntax: did not find expected node content; a value is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseErr(t, "x.yaml", tc.src); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			if tc.yaml == "" {
				return
			}
			_, _, err := documents([]byte(tc.src))
			if err == nil || err.Error() != tc.yaml {
				t.Errorf("yaml.v3 says %v, the test expects %q", err, tc.yaml)
			}
		})
	}
}

// Duplicate keys are found by the decoder, which knows both lines.
func TestDuplicateKeyLine(t *testing.T) {
	src := "hardware:\n  backend: sim\ncontrollers:\n  - bitrate: 500000\nhardware:\n  backend: sim\n"
	want := "x.yaml:5:1: hardware: duplicate key; already given at line 1; keep one"
	if got := parseErr(t, "x.yaml", src); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// Only one YAML document is read: a second one is an error at its "---".
func TestSecondDocument(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"second document", ok500 + "---\ncontrollers:\n  - bitrate: 250000\n",
			"x.yaml:3: a second YAML document starts here; cand reads one: remove this '---' and what follows, or merge it into the first document"},
		{"after an end marker", ok500 + "...\n\n---\nmetrics: {listen: \"\"}\n",
			"x.yaml:5: a second YAML document starts here; cand reads one: remove this '---' and what follows, or merge it into the first document"},
		{"a second null", ok500 + "--- ~\n",
			"x.yaml:3: a second YAML document starts here; cand reads one: remove this '---' and what follows, or merge it into the first document"},
		{"empty first document", "---\n---\n" + ok500,
			"x.yaml:2: a second YAML document starts here; cand reads one: remove this '---' and what follows, or merge it into the first document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseErr(t, "x.yaml", tc.src); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	// Empty documents around the one are not documents with content.
	for _, src := range []string{"---\n" + ok500, ok500 + "---\n", ok500 + "--- # end\n", ok500 + "...\n", ok500 + "---\n# nothing more\n---\n"} {
		if _, err := Parse("x.yaml", []byte(src)); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}

// Empty files, and files with only comments, say so and what to write.
func TestEmptyFile(t *testing.T) {
	const fix = "; give at least one controller, e.g.\n  controllers:\n    - bitrate: 500000\n(deploy/cand.yaml is a commented example)"
	for src, want := range map[string]string{
		"":                     "x.yaml: the file is empty" + fix,
		"\n  \n":               "x.yaml: the file is empty" + fix,
		"# cand\n# nothing\n":  "x.yaml: the file holds no settings (only comments or document markers)" + fix,
		"---\n# nothing yet\n": "x.yaml: the file holds no settings (only comments or document markers)" + fix,
		"~\n":                  "x.yaml:1:1: controllers: at least one controller is required, e.g.\n  controllers:\n    - bitrate: 500000",
		"hardware: {}\n":       "x.yaml:1:1: controllers: at least one controller is required, e.g.\n  controllers:\n    - bitrate: 500000",
	} {
		if got := parseErr(t, "x.yaml", src); got != want {
			t.Errorf("%q: got:\n%s\nwant:\n%s", src, got, want)
		}
	}
}

// lineEnds counts line breaks as YAML does.
func TestLineEnds(t *testing.T) {
	got := lineEnds([]byte("a\nb\r\nc\rd\u0085e\u2028f"))
	want := []int{2, 5, 7, 10, 14, 15}
	if !slices.Equal(got, want) {
		t.Errorf("lineEnds = %v, want %v", got, want)
	}
}

// yaml.v3 may name a line past the last, for an error at the end of the file.
func TestSyntaxErrorPastTheEnd(t *testing.T) {
	p := syntaxProblem("x.yaml", []byte("a: 'b\n"), errors.New("yaml: line 9: found unexpected end of stream"))
	if p.Line != 1 {
		t.Errorf("line %d, want 1", p.Line)
	}
}

// A second document after a line break other than LF is found as well.
func TestSecondDocumentOtherBreaks(t *testing.T) {
	for _, src := range []string{"controllers:\r  - bitrate: 500000\r---\rb: 1\r", "controllers:\r\n  - bitrate: 500000\r\n---\r\nb: 1\r\n"} {
		const want = "x.yaml:3: a second YAML document starts here; cand reads one: remove this '---' and what follows, or merge it into the first document"
		if got := parseErr(t, "x.yaml", src); got != want {
			t.Errorf("%q: got:\n%s\nwant:\n%s", src, got, want)
		}
	}
}
