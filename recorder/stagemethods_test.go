package recorder

import (
	"go/ast"
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

// stagePackages are the stages whose exported methods the root may call:
// each is in docs/architecture.md's table of stage methods.
var stagePackages = []string{"recorder/frontier", "recorder/peer", "recorder/splitter", "recorder/warcout", "recorder/worker"}

// rootCalls type-checks the root package's non-test files (against the
// compiled export data of its imports, as go list -export gives it) and
// returns, for every method of a named type of stagePackages that the
// root uses, the sorted root files that use it; and the types the root
// refers to.
func rootCalls(t *testing.T, root string) (calls map[string][]string, used map[*types.TypeName]bool) {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}", "./recorder")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if e, ok := err.(*exec.ExitError); ok {
			stderr = e.Stderr
		}
		t.Fatalf("go list -export: %v\n%s", err, stderr)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if p, f, ok := strings.Cut(line, "="); ok && f != "" {
			exports[p] = f
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, os.ErrNotExist
		}
		return os.Open(f)
	})
	dir := filepath.Join(root, "recorder")
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	if _, err := (&types.Config{Importer: imp}).Check(modulePath+"recorder", fset, files, info); err != nil {
		t.Fatalf("type-checking the root: %v", err)
	}
	calls, used = map[string][]string{}, map[*types.TypeName]bool{}
	for id, obj := range info.Uses {
		if obj.Pkg() == nil || !slices.Contains(stagePackages, strings.TrimPrefix(obj.Pkg().Path(), modulePath)) {
			continue
		}
		switch o := obj.(type) {
		case *types.TypeName:
			used[o] = true
		case *types.Func:
			recv := o.Signature().Recv()
			if recv == nil {
				continue
			}
			named := namedOf(recv.Type())
			if named == nil {
				continue
			}
			used[named.Obj()] = true
			key := methodKey(named, o.Name())
			file := filepath.Base(fset.Position(id.Pos()).Filename)
			if !slices.Contains(calls[key], file) {
				calls[key] = append(calls[key], file)
			}
		}
	}
	for _, v := range calls {
		slices.Sort(v)
	}
	return calls, used
}

func namedOf(t types.Type) *types.Named {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, _ := t.(*types.Named)
	return n
}

// methodKey names a method as the table does: package.Type.Method.
func methodKey(n *types.Named, method string) string {
	return n.Obj().Pkg().Name() + "." + n.Obj().Name() + "." + method
}

// TestStageMethods keeps the root from reading a stage's internals
// through getters: every exported method of every stage type the root
// uses (not an interface: those are what a stage asks of others) has a
// row in docs/architecture.md's table of stage methods, which names the
// root files that call it (exactly those the sources have), its consumer
// and why it is not a getter into the stage's state; and the table has
// no row for a method that is not there.
func TestStageMethods(t *testing.T) {
	root := ".."
	calls, used := rootCalls(t, root)
	want := map[string]string{}
	for tn := range used {
		n, ok := tn.Type().(*types.Named)
		if !ok || types.IsInterface(n) {
			continue
		}
		for i := range n.NumMethods() {
			m := n.Method(i)
			if !m.Exported() {
				continue
			}
			key := methodKey(n, m.Name())
			files := "none"
			if c := calls[key]; len(c) > 0 {
				files = strings.Join(c, ", ")
			}
			want[key] = files
		}
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "| method | the root calls it in | consumer | why it is not a getter into the stage |\n|---|---|---|---|\n")
	if !ok {
		t.Fatal("docs/architecture.md has no table of stage methods")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	have := map[string]bool{}
	for _, row := range strings.Split(table, "\n") {
		cells := strings.Split(strings.Trim(row, "| "), " | ")
		if len(cells) != 4 {
			t.Errorf("docs/architecture.md: stage method row %q: want 4 cells", row)
			continue
		}
		key := strings.Trim(cells[0], "`")
		have[key] = true
		files, ok := want[key]
		switch {
		case !ok:
			t.Errorf("docs/architecture.md: stage method %s: no such exported method of a stage type the root uses", key)
		case cells[1] != files:
			t.Errorf("docs/architecture.md: %s: the root calls it in %q, the table says %q", key, files, cells[1])
		case cells[2] == "" || cells[3] == "":
			t.Errorf("docs/architecture.md: %s: name its consumer and why it is not a getter", key)
		}
	}
	var missing []string
	for key, files := range want {
		if !have[key] {
			missing = append(missing, "| `"+key+"` | "+files+" |  |  |")
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("docs/architecture.md: the table of stage methods lacks:\n%s", strings.Join(missing, "\n"))
	}
}
