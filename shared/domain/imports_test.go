// Package domain_test guards what shared/domain stands on: the domain packages
// (tasks, steps, grants, budgets, pulses, the audit trail, events, wake-ups)
// import the standard library, each other and shared/kit (Prickle's own
// small extensions of the standard library, which import nothing else), so
// they run and test without AWS, MCP or any other dependency.
package domain_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/useprickle/prickle/"

func TestTheDomainStandsOnTheStandardLibrary(t *testing.T) {
	for _, c := range []struct {
		dir     string
		allowed []string // module-relative import prefixes beyond the standard library
	}{
		{".", []string{"shared/domain/", "shared/kit/"}},
		{filepath.Join("..", "kit"), nil},
	} {
		imports := importsUnder(t, c.dir)
		if len(imports) == 0 {
			t.Fatalf("no Go files under %s", c.dir)
		}
		for file, paths := range imports {
			for _, p := range paths {
				if standard(p) {
					continue
				}
				ok := false
				for _, a := range c.allowed {
					ok = ok || strings.HasPrefix(p, module+a)
				}
				if !ok {
					t.Errorf("%s imports %s: the domain stands on the standard library, each other and shared/kit; shared/kit on the standard library alone", file, p)
				}
			}
		}
	}
}

// importsUnder lists the imports of every non-test Go file under dir.
func importsUnder(t *testing.T, dir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[path] = append(out[path], p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// standard reports whether an import path is the standard library's: its
// first element has no dot (golang.org/x/… and github.com/… have one).
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}
