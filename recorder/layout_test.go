package recorder

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const modulePath = "github.com/crawltrace/crawltrace/"

// ourImports maps every package under the given top folders of the
// module (relative paths such as "recorder/peer") to the packages of ours
// its non-test files import, read from the sources with go/parser.
func ourImports(t *testing.T, root string, tops ...string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, top := range tops {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			pkg := filepath.ToSlash(rel)
			if _, ok := out[pkg]; !ok {
				out[pkg] = nil
			}
			for _, im := range f.Imports {
				p := strings.Trim(im.Path.Value, `"`)
				if q, ok := strings.CutPrefix(p, modulePath); ok && !slices.Contains(out[pkg], q) {
					out[pkg] = append(out[pkg], q)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

// TestPackageLayers keeps the layers of docs/architecture.md: the bottom
// layer (internal/) imports no stage, no package under recorder/ imports
// the root that assembles them, and the import table in the document is
// the one the sources have.
func TestPackageLayers(t *testing.T) {
	root := ".."
	all := ourImports(t, root, "internal", "recorder")
	var rows []string
	for pkg, deps := range all {
		if strings.HasPrefix(pkg, "internal/") {
			for _, d := range deps {
				if !strings.HasPrefix(d, "internal/") {
					t.Errorf("%s imports %s: internal/ is the bottom layer", pkg, d)
				}
			}
			continue
		}
		if pkg != "recorder" && slices.Contains(deps, "recorder") {
			t.Errorf("%s imports the recorder root", pkg)
		}
		imports := strings.Join(deps, ", ")
		if imports == "" {
			imports = "none"
		}
		rows = append(rows, "| "+pkg+" | "+imports+" |")
	}
	slices.Sort(rows)
	table := "| package | imports of ours |\n|---|---|\n" + strings.Join(rows, "\n") + "\n"
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), table) {
		t.Errorf("docs/architecture.md: the import table is not the sources'; it should read:\n%s", table)
	}
}
