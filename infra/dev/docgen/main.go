// Command tooldocs writes the parts of the documentation that the tool
// catalog decides: the tool table of README.md and the per-tool reference of
// docs/tools.md, each between its generated markers. It reads the same
// catalog as tools/list and the /docs/reference/mcp-tools page, so the docs
// cannot drift from what agents are told (its test fails when they are
// stale).
//
//	go run ./infra/dev/docgen   (from the repository root; make docs)
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	for _, f := range Files {
		if err := f.Write(*root); err != nil {
			fmt.Fprintln(os.Stderr, "tooldocs:", err)
			os.Exit(1)
		}
	}
}
