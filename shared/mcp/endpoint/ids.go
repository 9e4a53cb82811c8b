package endpoint

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// maxExactID is the largest integer a float64 holds exactly (JavaScript's MAX_SAFE_INTEGER).
const maxExactID = 1<<53 - 1

// validID reports whether a request's JSON-RPC id is one MCP allows: a
// string, or an integer written without a fraction or an exponent whose
// magnitude is at most 2^53-1 (mcp-go reads a numeric id through float64,
// so a larger one would be echoed changed). A missing id (a notification) is valid; null, objects, arrays,
// booleans and other numbers are not.
func validID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return true
	}
	switch raw[0] {
	case '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		n, err := strconv.ParseInt(string(raw), 10, 64)
		return err == nil && n >= -maxExactID && n <= maxExactID
	}
	return false
}
