package step

import (
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/kit/jsonlimit"
)

// nested is {"a": [[…[]…]]}: an input object nesting depth levels in all.
func nested(depth int) string {
	return `{"a":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
}

// elements is an input holding n keys and array elements in all.
func elements(n int) string {
	return `{"a":[` + strings.TrimSuffix(strings.Repeat("0,", n-1), ",") + `]}`
}

// sized is an input of exactly n bytes as canonical JSON.
func sized(n int) string {
	return `{"c":"` + strings.Repeat("x", n-len(`{"c":""}`)) + `"}`
}

func TestCheckInputBounds(t *testing.T) {
	for _, tc := range []struct {
		name, input, limit string
	}{
		{"depth under", nested(MaxInputDepth - 1), ""},
		{"depth at", nested(MaxInputDepth), ""},
		{"depth over", nested(MaxInputDepth + 1), jsonlimit.Depth},
		{"depth 1000", nested(1000), jsonlimit.Depth},
		{"elements under", elements(MaxInputElements - 1), ""},
		{"elements at", elements(MaxInputElements), ""},
		{"elements over", elements(MaxInputElements + 1), jsonlimit.Elements},
		{"size under", sized(MaxInputBytes - 1), ""},
		{"size at", sized(MaxInputBytes), ""},
		{"size over", sized(MaxInputBytes + 1), "size"},
		{"1 MB", sized(1_000_000), "size"},
		{"whitespace does not count", `{"c": "` + strings.Repeat("x", MaxInputBytes-len(`{"c":""}`)) + `"   }`, ""},
	} {
		canonical, err := CheckInput(json.RawMessage(tc.input))
		if tc.limit == "" {
			if err != nil || len(canonical) > MaxInputBytes {
				t.Errorf("%s: %v (%d bytes), want accepted", tc.name, err, len(canonical))
			}
			continue
		}
		var le *InputLimitError
		if !errors.As(err, &le) || le.Limit != tc.limit {
			t.Errorf("%s: %v, want the %s limit", tc.name, err, tc.limit)
			continue
		}
		if canonical != nil {
			t.Errorf("%s: refused input still canonicalised", tc.name)
		}
	}
}

func TestInputLimitErrorNamesTheLimit(t *testing.T) {
	for input, want := range map[string]string{
		nested(33):        "input nests deeper than 32 levels: the limit of a step's input depth is 32",
		elements(1001):    "input holds more than 1000 keys and array elements in all: the limit of a step's input is 1000",
		sized(1_000_000):  "input is 1000000 bytes as canonical JSON: the limit of a step's input size is 65536 bytes (64 KiB)",
		`{"a":1}{}`:       "not one JSON value",
		`{"a":` + "\x00}": "not JSON",
		// Found by FuzzCanonical: other JSON values passed as inputs.
		`[]`:    "not a JSON object",
		` [1] `: "not a JSON object",
		`"rm"`:  "not a JSON object",
		`null`:  "not a JSON object",
		`12`:    "not a JSON object",
		`false`: "not a JSON object",
	} {
		_, err := CheckInput(json.RawMessage(input))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40s: %v, want %q", input, err, want)
		}
	}
}

// TestDeepInputRefusedQuicklyInBoundedMemory: a 20 KB input nested 10,000
// levels deep is refused at level 33, within a millisecond-scale budget and
// a few KB of allocations, not the gigabytes its rendering used to take.
func TestDeepInputRefusedQuicklyInBoundedMemory(t *testing.T) {
	input := json.RawMessage(nested(10_000))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := CheckInput(input)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if !errors.As(err, new(*InputLimitError)) {
		t.Fatalf("depth 10000: %v, want the depth limit", err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("depth 10000, %d bytes: refused in %v, %d bytes allocated", len(input), took, alloc)
	if took > 50*time.Millisecond || alloc > 256<<10 {
		t.Errorf("depth 10000 refused in %v with %d bytes allocated; want < 50ms and < 256 KiB", took, alloc)
	}
}
