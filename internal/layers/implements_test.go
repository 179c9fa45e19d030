package layers

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// implementsClaim finds a comment's claim that a type satisfies an interface:
// "Collect implements prometheus.Collector", "It has the method set of
// mcp2515.IntLine".
var implementsClaim = regexp.MustCompile(`\b(?:implements|has the method set of) ((?:[a-z][a-z0-9]*\.)?[A-Z][A-Za-z0-9_]*|error)\b`)

// majorVersion is an import path's last element that is a major version.
var majorVersion = regexp.MustCompile(`^v[0-9]+$`)

// claim is one comment saying that typ implements iface, both as import path and
// name ("cand/sim/mcpchip.Chip", "cand/sim/canbus.Node"; "error").
type claim struct {
	iface, typ string
	at         string // file:line of the comment
}

// checkKey is a compile-time check `var _ iface = (*typ)(nil)`.
type checkKey struct{ iface, typ string }

// TestImplementsIsChecked: every comment in the module's non-test code that says
// a type implements an interface (or has its method set) has a compile-time check
// of it somewhere in the module, `var _ X = (*T)(nil)` or `var _ X = T{}`, so the
// claim stays true when either side changes.
func TestImplementsIsChecked(t *testing.T) {
	root, module := moduleRoot(t)
	checks := map[checkKey]bool{}
	var claims []claim
	fset := token.NewFileSet()
	pkgFiles := map[string][]*ast.File{} // by import path
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		imp := path.Join(module, filepath.ToSlash(rel))
		pkgFiles[imp] = append(pkgFiles[imp], f)
		return nil
	})
	if err != nil {
		t.Fatalf("reading the module's code under %s: %v", root, err)
	}
	// A comment may name an interface of a module package its own package does not
	// import (the check is then where both are imported): by its package name.
	byName := map[string]string{}
	for imp, files := range pkgFiles {
		name := files[0].Name.Name
		if _, dup := byName[name]; dup {
			byName[name] = "" // ambiguous
			continue
		}
		byName[name] = imp
	}
	for imp, files := range pkgFiles {
		pkgImports := map[string]string{}
		for _, f := range files {
			for k, v := range fileImports(f) {
				pkgImports[k] = v
			}
		}
		for _, f := range files {
			fi := fileImports(f)
			resolve := func(q string) string {
				if q == "error" {
					return q
				}
				pkg, name, ok := strings.Cut(q, ".")
				if !ok {
					return imp + "." + q
				}
				if p, ok := fi[pkg]; ok {
					return p + "." + name
				}
				if p, ok := pkgImports[pkg]; ok {
					return p + "." + name
				}
				if p := byName[pkg]; p != "" {
					return p + "." + name
				}
				return "?" + q
			}
			collectChecks(f, resolve, checks)
			claims = append(claims, collectClaims(fset, f, resolve)...)
		}
	}
	if len(checks) == 0 {
		t.Fatalf("no `var _ X = (*T)(nil)` checks found under %s: the parse is wrong", root)
	}
	for _, c := range claims {
		if strings.HasPrefix(c.iface, "?") {
			t.Errorf("%s: a comment says %s implements %s, a package neither it nor the module knows by that name", c.at, c.typ, c.iface[1:])
			continue
		}
		if !checks[checkKey{c.iface, c.typ}] {
			t.Errorf("%s: a comment says %s implements %s, but no `var _ %s = (*%s)(nil)` (or = %s{}) checks it; add one beside the type",
				c.at, c.typ, c.iface, short(c.iface), short(c.typ), short(c.typ))
		}
	}
	t.Logf("%d compile-time interface checks, %d comments claiming one", len(checks), len(claims))
}

// moduleRoot finds go.mod above the test's directory and returns its directory
// and module path.
func moduleRoot(t *testing.T) (dir, module string) {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Skipf("no working directory: %v", err)
	}
	for {
		f, err := os.Open(filepath.Join(dir, "go.mod"))
		if err == nil {
			defer f.Close()
			s := bufio.NewScanner(f)
			for s.Scan() {
				if m, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
					return dir, strings.TrimSpace(m)
				}
			}
			t.Fatalf("%s/go.mod names no module", dir)
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Skip("no go.mod above the test's directory: the module's source is not here (as when the test binary runs elsewhere)")
		}
		dir = up
	}
}

// fileImports maps a file's import names to their paths. An import without a
// name is known by its path's last element, less a major version
// ("go.yaml.in/yaml/v2", "gopkg.in/yaml.v3": yaml).
func fileImports(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, s := range f.Imports {
		p, err := strconv.Unquote(s.Path.Value)
		if err != nil {
			continue
		}
		name := ""
		if s.Name != nil {
			name = s.Name.Name
		} else {
			elems := strings.Split(p, "/")
			name = elems[len(elems)-1]
			if len(elems) > 1 && majorVersion.MatchString(name) {
				name = elems[len(elems)-2]
			}
			name, _, _ = strings.Cut(name, ".")
			name = strings.TrimPrefix(name, "go-")
		}
		m[name] = p
	}
	return m
}

// collectChecks adds f's `var _ X = ...` declarations to checks.
func collectChecks(f *ast.File, resolve func(string) string, checks map[checkKey]bool) {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if v.Type == nil || len(v.Names) != len(v.Values) {
				continue
			}
			for i, n := range v.Names {
				if n.Name != "_" {
					continue
				}
				iface, typ := exprName(v.Type), valueType(v.Values[i])
				if iface != "" && typ != "" {
					checks[checkKey{resolve(iface), resolve(typ)}] = true
				}
			}
		}
	}
}

// collectClaims returns f's comments on methods and types that say the type
// implements an interface.
func collectClaims(fset *token.FileSet, f *ast.File, resolve func(string) string) []claim {
	var cs []claim
	add := func(doc *ast.CommentGroup, typ string) {
		if doc == nil || typ == "" {
			return
		}
		for _, m := range implementsClaim.FindAllStringSubmatch(doc.Text(), -1) {
			cs = append(cs, claim{iface: resolve(m[1]), typ: resolve(typ), at: fset.Position(doc.Pos()).String()})
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil && len(d.Recv.List) == 1 {
				add(d.Doc, recvName(d.Recv.List[0].Type))
			}
		case *ast.GenDecl:
			if d.Tok != token.TYPE {
				continue
			}
			for _, s := range d.Specs {
				ts := s.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(d.Specs) == 1 {
					doc = d.Doc
				}
				add(doc, ts.Name.Name)
			}
		}
	}
	return cs
}

// exprName is a type expression's name as written ("T", "pkg.T"), "" for another
// kind of expression.
func exprName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			return x.Name + "." + e.Sel.Name
		}
	case *ast.IndexExpr: // a generic type's instance
		return exprName(e.X)
	case *ast.IndexListExpr:
		return exprName(e.X)
	}
	return ""
}

// valueType is the type of a check's value: (*T)(nil), new(T), &T{}, T{}, T(x).
func valueType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.CallExpr:
		switch fn := e.Fun.(type) {
		case *ast.ParenExpr:
			if st, ok := fn.X.(*ast.StarExpr); ok {
				return exprName(st.X)
			}
			return exprName(fn.X)
		case *ast.Ident:
			if fn.Name == "new" && len(e.Args) == 1 {
				return exprName(e.Args[0])
			}
		}
		return exprName(e.Fun)
	case *ast.UnaryExpr:
		if e.Op == token.AND {
			return valueType(e.X)
		}
	case *ast.CompositeLit:
		return exprName(e.Type)
	}
	return ""
}

// recvName is a method receiver's type name: T for T, *T, T[P], *T[P].
func recvName(e ast.Expr) string {
	if st, ok := e.(*ast.StarExpr); ok {
		e = st.X
	}
	switch e := e.(type) {
	case *ast.IndexExpr:
		return exprName(e.X)
	case *ast.IndexListExpr:
		return exprName(e.X)
	}
	return exprName(e)
}

// short is a qualified name as code writes it: cand/sim/canbus.Node is canbus.Node.
func short(q string) string {
	_, name := path.Split(q)
	return name
}
