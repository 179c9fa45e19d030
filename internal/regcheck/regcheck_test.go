package regcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The register types, by package: addresses and offsets, and the values of
// registers' fields.
var (
	addressTypes = map[string][]string{
		"cand/mcp2515":    {"Addr"},
		"cand/hw/bcm2835": {"SPIReg", "GPIOReg", "STReg"},
	}
	valueTypes = map[string][]string{
		"cand/mcp2515":    {"Bits", "Mode", "Status"},
		"cand/hw/bcm2835": {"CS", "Fsel"},
	}
	// registerFiles declare the register maps: the only files of the register
	// packages that may compute addresses and write masks as numbers.
	registerFiles = map[string][]string{
		"cand/mcp2515":    {"regs.go", "id.go"},
		"cand/hw/bcm2835": {"regs.go"},
	}
)

// TestNoUntypedLiteralRegisters checks the module's non-test code: no argument of
// a register type and no conversion to one is a bare number.
func TestNoUntypedLiteralRegisters(t *testing.T) {
	for _, p := range loadModule(t) {
		for _, f := range p.files {
			name := p.fset.File(f.Pos()).Name()
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				for _, bad := range literalArgs(p.info, call) {
					if slices.Contains(registerFiles[p.path], filepath.Base(name)) && bad.conversion {
						continue // the register map builds its constants
					}
					t.Errorf("%s: %s: use a named constant or a register function of the register map", p.fset.Position(bad.at.Pos()), bad.what)
				}
				return true
			})
		}
	}
}

// TestRegistersComputedInRegisterFiles checks mcp2515 and hw/bcm2835 outside
// their register files: no arithmetic on an address or offset, and no literal
// mask.
func TestRegistersComputedInRegisterFiles(t *testing.T) {
	checked := 0
	for _, p := range loadModule(t) {
		if registerFiles[p.path] == nil {
			continue
		}
		for _, f := range p.files {
			name := p.fset.File(f.Pos()).Name()
			if slices.Contains(registerFiles[p.path], filepath.Base(name)) {
				continue
			}
			checked++
			ast.Inspect(f, func(n ast.Node) bool {
				var op token.Token
				var x, y ast.Expr
				switch e := n.(type) {
				case *ast.BinaryExpr:
					op, x, y = e.Op, e.X, e.Y
				case *ast.AssignStmt:
					if len(e.Lhs) != 1 || len(e.Rhs) != 1 || e.Tok == token.ASSIGN || e.Tok == token.DEFINE {
						return true
					}
					op, x, y = assignOp[e.Tok], e.Lhs[0], e.Rhs[0]
				default:
					return true
				}
				if msg := registerArithmetic(p.info, op, x, y); msg != "" {
					t.Errorf("%s: %s: name it, a register's in %s", p.fset.Position(n.Pos()), msg, strings.Join(registerFiles[p.path], " or "))
				}
				return true
			})
		}
	}
	if checked == 0 {
		t.Fatal("no file of mcp2515 or hw/bcm2835 checked: the packages moved?")
	}
}

// assignOp is the operator of an assignment such as &=.
var assignOp = map[token.Token]token.Token{
	token.ADD_ASSIGN: token.ADD, token.SUB_ASSIGN: token.SUB, token.MUL_ASSIGN: token.MUL,
	token.QUO_ASSIGN: token.QUO, token.REM_ASSIGN: token.REM, token.AND_ASSIGN: token.AND,
	token.OR_ASSIGN: token.OR, token.XOR_ASSIGN: token.XOR, token.SHL_ASSIGN: token.SHL,
	token.SHR_ASSIGN: token.SHR, token.AND_NOT_ASSIGN: token.AND_NOT,
}

var (
	arithmetic = []token.Token{token.ADD, token.SUB, token.MUL, token.QUO, token.REM, token.AND, token.OR, token.XOR, token.SHL, token.SHR, token.AND_NOT}
	bitwise    = []token.Token{token.AND, token.OR, token.XOR, token.AND_NOT}
)

// registerArithmetic describes what is wrong with x op y, or is "".
func registerArithmetic(info *types.Info, op token.Token, x, y ast.Expr) string {
	if !slices.Contains(arithmetic, op) {
		return ""
	}
	for _, e := range []ast.Expr{x, y} {
		if isRegisterType(info.TypeOf(e), addressTypes) {
			return fmt.Sprintf("arithmetic on a register address (%s %s %s)", types.ExprString(x), op, types.ExprString(y))
		}
	}
	if !slices.Contains(bitwise, op) {
		return ""
	}
	for _, pair := range [][2]ast.Expr{{x, y}, {y, x}} {
		lit, other := pair[0], pair[1]
		if !literalOnly(info, lit) || isZero(info, lit) {
			continue
		}
		if isRegisterType(info.TypeOf(other), valueTypes) || radixWritten(lit) {
			return fmt.Sprintf("a literal register mask (%s %s %s)", types.ExprString(x), op, types.ExprString(y))
		}
	}
	return ""
}

// literalArg is an argument or conversion that hands a register type a bare
// number.
type literalArg struct {
	at         ast.Expr
	what       string
	conversion bool
}

// literalArgs are call's arguments that are bare numbers where a register type is
// taken, or its operand if call converts a bare number to a register type.
func literalArgs(info *types.Info, call *ast.CallExpr) []literalArg {
	fun, ok := info.Types[call.Fun]
	if !ok {
		return nil
	}
	if fun.IsType() {
		if len(call.Args) == 1 && bare(info, fun.Type, call.Args[0]) {
			return []literalArg{{call, fmt.Sprintf("conversion of a bare number to a register type: %s", types.ExprString(call)), true}}
		}
		return nil
	}
	sig, ok := fun.Type.Underlying().(*types.Signature)
	if !ok {
		return nil
	}
	var out []literalArg
	params := sig.Params()
	for i, a := range call.Args {
		var pt types.Type
		switch {
		case sig.Variadic() && i >= params.Len()-1:
			if call.Ellipsis.IsValid() {
				continue
			}
			pt = params.At(params.Len() - 1).Type().(*types.Slice).Elem()
		case i < params.Len():
			pt = params.At(i).Type()
		default:
			continue
		}
		if bare(info, pt, a) {
			out = append(out, literalArg{a, fmt.Sprintf("bare number %s passed as %s to %s", types.ExprString(a), pt, types.ExprString(call.Fun)), false})
		}
	}
	return out
}

// bare reports whether e, taken as type t, is a bare number for a register type:
// any for an address, a nonzero one for a field value.
func bare(info *types.Info, t types.Type, e ast.Expr) bool {
	switch {
	case isRegisterType(t, addressTypes):
		return literalOnly(info, e)
	case isRegisterType(t, valueTypes):
		return literalOnly(info, e) && !isZero(info, e)
	}
	return false
}

// isRegisterType reports whether t is one of the named types in set.
func isRegisterType(t types.Type, set map[string][]string) bool {
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return false
	}
	return slices.Contains(set[n.Obj().Pkg().Path()], n.Obj().Name())
}

// literalOnly reports whether e is a constant written with literals only: no
// named constant in it.
func literalOnly(info *types.Info, e ast.Expr) bool {
	if tv, ok := info.Types[e]; !ok || tv.Value == nil {
		return false
	}
	named := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if _, ok := info.Uses[id].(*types.Const); ok {
				named = true
			}
		}
		return !named
	})
	return !named
}

func isZero(info *types.Info, e ast.Expr) bool {
	v := info.Types[e].Value
	return v != nil && v.Kind() == constant.Int && constant.Sign(v) == 0
}

// radixWritten reports whether e holds an integer literal written in hex, octal
// or binary: the way a mask is written.
func radixWritten(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if l, ok := n.(*ast.BasicLit); ok && l.Kind == token.INT && len(l.Value) > 1 && l.Value[0] == '0' {
			found = true
		}
		return !found
	})
	return found
}

// pkg is one type-checked package of the module (its non-test files).
type pkg struct {
	path  string
	fset  *token.FileSet
	files []*ast.File
	info  *types.Info
}

// listed is what go list says of a package.
type listed struct {
	ImportPath, Dir, Export string
	GoFiles                 []string
	Module                  *struct{ Path string }
}

// loadModule type-checks every package of the module from its source, its
// imports from the export data go list builds; it skips the test where the go
// command cannot run.
func loadModule(t *testing.T) []pkg {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the packages are loaded with the go command, which is not on PATH here (as under qemu-user): %v", err)
	}
	cmd := exec.Command(goCmd, "list", "-deps", "-export", "-json=ImportPath,Dir,Export,GoFiles,Module", "cand/...")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start %s (as under qemu-user, which cannot run the host's binaries): %v", goCmd, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	exports := map[string]string{}
	var mine []listed
	for dec := json.NewDecoder(&stdout); ; {
		var l listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[l.ImportPath] = l.Export
		if l.Module != nil && l.Module.Path == "cand" {
			mine = append(mine, l)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if f := exports[path]; f != "" {
			return os.Open(f)
		}
		return nil, fmt.Errorf("no export data for %s", path)
	})
	var out []pkg
	for _, l := range mine {
		p := pkg{path: l.ImportPath, fset: fset, info: &types.Info{
			Types: map[ast.Expr]types.TypeAndValue{},
			Uses:  map[*ast.Ident]types.Object{},
		}}
		for _, name := range l.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(l.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			p.files = append(p.files, f)
		}
		conf := types.Config{Importer: imp}
		if _, err := conf.Check(l.ImportPath, fset, p.files, p.info); err != nil {
			t.Fatalf("type-checking %s: %v", l.ImportPath, err)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		t.Fatal("go list found no package of the module")
	}
	return out
}
