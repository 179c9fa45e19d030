package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxProblems is how many problems one Errors lists; the rest are only counted.
const MaxProblems = 20

// maxFound is how many problems are kept while a file is checked, of which the
// first MaxProblems by line are listed; beyond it problems are only counted, so a
// file wrong a million times over (through aliases) costs no more than one wrong
// a thousand times.
const maxFound = 1000

// maxShown is how many bytes of a value a message repeats: a mistyped name of a
// megabyte must not make a megabyte of error.
const maxShown = 40

// clip returns s for a message: whole if short, else its first maxShown bytes (cut
// at a character's start), "..." and its length.
func clip(s string) string {
	head, rest := cut(s)
	return head + rest
}

// quote is strconv.Quote for a value in a message, clipped like clip.
func quote(s string) string {
	head, rest := cut(s)
	return strconv.Quote(head) + rest
}

func cut(s string) (head, rest string) {
	if len(s) <= maxShown {
		return s, ""
	}
	n := maxShown
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], fmt.Sprintf("... (%d bytes)", len(s))
}

// Problem is one finding in a configuration file, located by line and column
// (1-based; Column 0 when only the line is known) and by key path, e.g.
// "controllers[0].interface.name".
type Problem struct {
	File    string
	Line    int
	Column  int
	Path    string
	Message string
}

// String is "file:line:col: path: message".
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
		if p.Column > 0 {
			fmt.Fprintf(&b, ":%d", p.Column)
		}
	}
	b.WriteString(": ")
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Errors is the error Load and Parse return: every problem found in the file,
// sorted by line and column, one per line of Error().
type Errors struct {
	Problems []Problem // at most MaxProblems
	Omitted  int       // problems found beyond MaxProblems
}

func (e *Errors) Error() string {
	lines := make([]string, 0, len(e.Problems)+1)
	for _, p := range e.Problems {
		lines = append(lines, p.String())
	}
	if e.Omitted > 0 {
		lines = append(lines, fmt.Sprintf("(%d more problems not shown; fix these first)", e.Omitted))
	}
	return strings.Join(lines, "\n")
}

// problems collects findings while a file is decoded and checked.
type problems struct {
	file     string
	errs     []Problem
	warnings []Problem
	dropped  int // errors found beyond maxFound
}

// full says that further errors are only counted.
func (ps *problems) full() bool { return len(ps.errs) >= maxFound }

func (ps *problems) errorf(at pos, path, format string, args ...any) {
	if ps.full() {
		ps.dropped++
		return
	}
	ps.errs = append(ps.errs, Problem{ps.file, at.line, at.col, path, fmt.Sprintf(format, args...)})
}

func (ps *problems) warnf(at pos, path, format string, args ...any) {
	if len(ps.warnings) >= maxFound {
		return
	}
	ps.warnings = append(ps.warnings, Problem{ps.file, at.line, at.col, path, fmt.Sprintf(format, args...)})
}

// result sorts the errors by position and caps them; nil when there are none.
func (ps *problems) result() error {
	if len(ps.errs) == 0 {
		return nil
	}
	sortProblems(ps.errs)
	e := &Errors{Problems: ps.errs, Omitted: ps.dropped}
	if len(e.Problems) > MaxProblems {
		e.Omitted += len(e.Problems) - MaxProblems
		e.Problems = e.Problems[:MaxProblems]
	}
	return e
}

func (ps *problems) warningLines() []string {
	sortProblems(ps.warnings)
	out := make([]string, len(ps.warnings))
	for i, w := range ps.warnings {
		out[i] = w.String()
	}
	return out
}

func sortProblems(p []Problem) {
	sort.SliceStable(p, func(i, j int) bool {
		if p[i].Line != p[j].Line {
			return p[i].Line < p[j].Line
		}
		return p[i].Column < p[j].Column
	})
}

// closest returns the candidate nearest to s by edit distance when it is near enough
// to be a typo (at most 2 edits, or a prefix of one another), else "".
func closest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	if best != "" || len(s) < 3 {
		return best
	}
	for _, c := range candidates {
		if strings.HasPrefix(c, s) || strings.HasPrefix(s, c) {
			return c
		}
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99 // not a typo of any key
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
