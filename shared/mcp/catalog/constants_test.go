package catalog_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/mcp/catalog"
	"github.com/useprickle/prickle/shared/team"
)

// The seed schemas and descriptions are published byte for byte, so the
// numbers they state are written there and again as the Go constants the
// service enforces them with: each such number is tied here, so that
// changing one without the other fails.
func TestSchemasAndDescriptionsStateTheGoConstants(t *testing.T) {
	tools := map[string]*catalog.Tool{}
	for _, tl := range catalog.All() {
		tools[tl.Name] = tl
	}
	at := func(t *testing.T, raw json.RawMessage, pointer string) float64 {
		t.Helper()
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		for _, key := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%s: no object at %s", pointer, key)
			}
			v = m[key]
		}
		n, ok := v.(float64)
		if !ok {
			t.Fatalf("%s is %v, not a number", pointer, v)
		}
		return n
	}
	for _, c := range []struct {
		tool, schema, pointer string
		want                  int
	}{
		{"read_room", "input", "/properties/limit/default", team.DefaultTaskLimit},
		{"read_room", "input", "/properties/limit/maximum", team.MaxTaskLimit},
		{"request_step", "output", "/properties/message/maxLength", team.MaxStepMessage},
	} {
		t.Run(c.tool+c.pointer, func(t *testing.T) {
			raw := tools[c.tool].Input
			if c.schema == "output" {
				raw = tools[c.tool].Output
			}
			if got := at(t, raw, c.pointer); got != float64(c.want) {
				t.Errorf("%s %s schema %s = %v, but the Go constant is %d", c.tool, c.schema, c.pointer, got, c.want)
			}
		})
	}
	minutes := fmt.Sprintf("within %d minutes", step.UseWindow/time.Minute)
	if !strings.Contains(tools["request_step"].Description, minutes) {
		t.Errorf("request_step's description does not say %q (step.UseWindow)", minutes)
	}
}
