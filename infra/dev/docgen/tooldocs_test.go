package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/mcp/catalog"
)

// TestDocsAreCurrent: the tool table of README.md and the reference of
// docs/tools.md are what the catalog makes of them today.
func TestDocsAreCurrent(t *testing.T) {
	for _, f := range Files {
		want, got, err := f.Current("../../..")
		if err != nil {
			t.Fatal(err)
		}
		if want != got {
			t.Errorf("%s: the %s is stale: run go run ./infra/dev/docgen (make docs)", f.Path, f.Block)
		}
	}
}

// TestEveryToolSaysWhoMayCall: WhoMayCall covers exactly the catalog.
func TestEveryToolSaysWhoMayCall(t *testing.T) {
	var names []string
	for _, tool := range catalog.All() {
		names = append(names, tool.Name)
		if WhoMayCall[tool.Name] == "" {
			t.Errorf("%s: no entry in WhoMayCall", tool.Name)
		}
	}
	for name := range WhoMayCall {
		if !slices.Contains(names, name) {
			t.Errorf("WhoMayCall names %s, which is not a tool of the catalog", name)
		}
	}
}

// TestTableRowsAreTheCatalog: the table has one row per tool, in the
// catalog's order, saying whether it writes.
func TestTableRowsAreTheCatalog(t *testing.T) {
	rows := strings.Split(strings.TrimSpace(Table()), "\n")[2:]
	if len(rows) != len(catalog.All()) {
		t.Fatalf("%d rows for %d tools", len(rows), len(catalog.All()))
	}
	for i, tool := range catalog.All() {
		cols := strings.Split(rows[i], " | ")
		if !strings.Contains(cols[0], "`"+tool.Name+"`") || cols[1] != yesNo(tool.Writes) {
			t.Errorf("row %d is %q, want %s writing %v", i, rows[i], tool.Name, tool.Writes)
		}
	}
}

// TestReplace: a block is replaced between its markers, and missing or
// doubled markers are an error rather than a silent append.
func TestReplace(t *testing.T) {
	doc := "a\n" + begin("x") + "\nold\n" + end("x") + "\nb\n"
	got, err := Replace(doc, "x", "new\n")
	if err != nil || got != "a\n"+begin("x")+"\nnew\n"+end("x")+"\nb\n" {
		t.Fatalf("Replace = %q, %v", got, err)
	}
	for _, bad := range []string{"a\n", begin("x") + "\n", end("x") + begin("x"), doc + doc} {
		if _, err := Replace(bad, "x", "new\n"); err == nil {
			t.Errorf("Replace(%q) did not fail", bad)
		}
	}
}
