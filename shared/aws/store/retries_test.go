package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// writeOps are the DynamoDB operations that change something.
var writeOps = []string{"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"}

// TestEveryWriteIsInTheRetryTable: every exported method of Store that
// writes (calls a write operation of s.db, itself or through other methods
// of s) has its row in docs/development.md's table of what a retry after a
// lost answer does, and the table names no method that does not write.
func TestEveryWriteIsInTheRetryTable(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string][]string{} // method -> methods of s it calls, and "db.<Op>"
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Body == nil || len(fn.Recv.List) != 1 || len(fn.Recv.List[0].Names) != 1 {
				continue
			}
			star, ok := fn.Recv.List[0].Type.(*ast.StarExpr)
			if !ok {
				continue
			}
			if id, ok := star.X.(*ast.Ident); !ok || id.Name != "Store" {
				continue
			}
			recv := fn.Recv.List[0].Names[0].Name
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				switch x := sel.X.(type) {
				case *ast.Ident:
					if x.Name == recv {
						calls[fn.Name.Name] = append(calls[fn.Name.Name], sel.Sel.Name)
					}
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok && id.Name == recv && x.Sel.Name == "db" && slices.Contains(writeOps, sel.Sel.Name) {
						calls[fn.Name.Name] = append(calls[fn.Name.Name], "db."+sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
	writes := map[string]bool{}
	var visit func(name string, seen map[string]bool) bool
	visit = func(name string, seen map[string]bool) bool {
		if seen[name] {
			return false
		}
		seen[name] = true
		for _, c := range calls[name] {
			if strings.HasPrefix(c, "db.") || visit(c, seen) {
				return true
			}
		}
		return false
	}
	for name := range calls {
		if ast.IsExported(name) && visit(name, map[string]bool{}) {
			writes[name] = true
		}
	}

	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "development.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Retries after a lost answer\n")
	if !ok {
		t.Logf("writes: %v", slices.Sorted(maps.Keys(writes)))
		t.Fatal("docs/development.md has no section \"Retries after a lost answer\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	listed := map[string]bool{}
	for line := range strings.SplitSeq(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		for _, m := range regexp.MustCompile("`([A-Za-z]+)`").FindAllStringSubmatch(first, -1) {
			listed[m[1]] = true
		}
	}
	for name := range writes {
		if !listed[name] {
			t.Errorf("Store.%s writes, but docs/development.md's retry table has no row for it", name)
		}
	}
	for name := range listed {
		if !writes[name] {
			t.Errorf("docs/development.md's retry table lists %s, which is not a write of Store", name)
		}
	}
	if len(writes) < 40 {
		t.Errorf("found %d writing methods; the parse missed some", len(writes))
	}
}
