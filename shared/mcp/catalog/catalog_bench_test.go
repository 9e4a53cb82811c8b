package catalog_test

import (
	"testing"

	"github.com/useprickle/prickle/shared/mcp/catalog"
)

// BenchmarkValidateInput is the argument check every tools/call pays before
// the tool runs: return_result's example against its JSON Schema.
//
//	go test -run '^$' -bench . -benchmem ./shared/mcp/catalog/
func BenchmarkValidateInput(b *testing.B) {
	t, ok := catalog.Lookup("return_result")
	if !ok {
		b.Fatal("no return_result in the catalog")
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := t.ValidateInput(t.Example); err != nil {
			b.Fatal(err)
		}
	}
}
