package layers

import (
	"bytes"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// target is one GOOS/GOARCH(/GOARM) the import graph is read for.
type target struct{ goos, goarch, goarm string }

func (tg target) String() string {
	s := tg.goos + "/" + tg.goarch
	if tg.goarm != "" {
		s += "/v" + tg.goarm
	}
	return s
}

// graph is the module's import graph on one target: each package of the module and
// the packages its non-test files import.
type graph map[string][]string

// loadGraphs reads the import graph of every package of the module (cand/...) on
// each target with `go list`, and skips the test where the go command cannot run.
func loadGraphs(t *testing.T, tgs []target) []graph {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the import graph is read with the go command, which is not on PATH here (as under qemu-user): %v", err)
	}
	var gs []graph
	for _, tg := range tgs {
		cmd := exec.Command(goCmd, "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "cand/...")
		// The last value of a repeated key wins, so these override the caller's.
		cmd.Env = append(os.Environ(), "GOOS="+tg.goos, "GOARCH="+tg.goarch, "GOARM="+tg.goarm, "CGO_ENABLED=0")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Skipf("cannot start %s (as under qemu-user, which cannot run the host's binaries): %v", goCmd, err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("go list cand/... for %s: %v\n%s", tg, err, stderr.Bytes())
		}
		gs = append(gs, parseGraph(stdout.String()))
	}
	return gs
}

// parseGraph reads lines of "package import import ...".
func parseGraph(s string) graph {
	g := graph{}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			g[f[0]] = f[1:]
		}
	}
	return g
}

// matches reports whether an import path matches a pattern: the path itself, or
// with a "/..." suffix, the path and everything below it.
func matches(pattern, path string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == pattern
}

func matchesAny(patterns []string, path string) bool {
	for _, p := range patterns {
		if matches(p, path) {
			return true
		}
	}
	return false
}

func (g graph) anyMatches(pattern string) bool {
	for p := range g {
		if matches(pattern, p) {
			return true
		}
	}
	return false
}

// violations returns, for each package of g matching from and each package
// matching forbidden that it reaches, the shortest import chain between the two,
// sorted. The walk goes only through the module's packages: a package outside the
// module cannot import one inside it.
func (g graph) violations(from, forbidden []string) [][]string {
	var out [][]string
	var roots []string
	for p := range g {
		if matchesAny(from, p) {
			roots = append(roots, p)
		}
	}
	sort.Strings(roots)
	for _, root := range roots {
		parent := map[string]string{root: ""}
		queue := []string{root}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			if p != root && matchesAny(forbidden, p) {
				var chain []string
				for q := p; q != ""; q = parent[q] {
					chain = append([]string{q}, chain...)
				}
				out = append(out, chain)
				continue
			}
			for _, imp := range g[p] {
				if _, seen := parent[imp]; !seen {
					if _, inModule := g[imp]; inModule {
						parent[imp] = p
						queue = append(queue, imp)
					}
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], " ") < strings.Join(out[j], " ") })
	return out
}

// Each forbidden package a package reaches is one violation, named by the shortest
// chain of imports to it; the walk stops at a forbidden package, and a package
// matching both sides is not its own violation.
func TestViolationsNameTheChain(t *testing.T) {
	g := parseGraph(`
cand/a cand/b fmt
cand/b cand/c cand/x/y
cand/c cand/x
cand/x
cand/x/y cand/x
cand/d cand/x/y
`)
	got := g.violations([]string{"cand/a", "cand/x/..."}, []string{"cand/x/..."})
	want := [][]string{
		{"cand/a", "cand/b", "cand/c", "cand/x"},
		{"cand/a", "cand/b", "cand/x/y"},
		{"cand/x/y", "cand/x"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("violations = %q, want %q", got, want)
	}
	if got := g.violations([]string{"cand/d"}, []string{"cand/a"}); len(got) != 0 {
		t.Errorf("cand/d does not reach cand/a, got %q", got)
	}
}
