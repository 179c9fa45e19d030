package config

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load reads and checks the configuration file at path. See Parse.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read configuration: %w; give an existing YAML file with -config (examples: deploy/cand.yaml, deploy/sim.yaml)", err)
	}
	return Parse(path, data)
}

// Parse decodes data strictly, fills in the defaults documented on the schema and
// validates the result, including that a bit timing exists for each controller.
// name is the file name the messages start with. On failure the error is an
// *Errors listing every problem found (up to MaxProblems), one per line, sorted by
// line: "name:line:col: key.path: what is wrong; what is allowed".
// Problems that do not stop cand are returned in Config.Warnings.
func Parse(name string, data []byte) (*Config, error) {
	ps := &problems{file: name}
	var doc yaml.Node
	if err := unmarshal(data, &doc); err != nil {
		ps.errs = append(ps.errs, syntaxProblem(name, err))
		return nil, ps.result()
	}
	d := newDecoder(ps)
	d.at[""] = pos{1, 1}
	var c Config
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		d.decode(doc.Content[0], reflect.ValueOf(&c).Elem(), "")
	}
	applyDefaults(&c, d)
	validate(&c, d)
	if err := ps.result(); err != nil {
		return nil, err
	}
	c.Warnings = ps.warningLines()
	return &c, nil
}

// unmarshal parses YAML into a node tree; a panic inside the YAML library becomes a
// syntax error rather than taking the daemon down.
func unmarshal(data []byte, doc *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	return yaml.Unmarshal(data, doc)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxProblem turns yaml.v3's "yaml: line 3: message" into a located problem.
func syntaxProblem(name string, err error) Problem {
	p := Problem{File: name, Message: "YAML syntax: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		p.Line, _ = strconv.Atoi(m[1])
		p.Message = "YAML syntax: " + m[2]
	}
	return p
}
