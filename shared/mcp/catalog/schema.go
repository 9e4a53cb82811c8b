package catalog

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed schemas/*.json
var schemaFiles embed.FS

// schemaFile reads one embedded schema or example; a missing file is a build bug.
func schemaFile(tool, kind string) json.RawMessage {
	b, err := schemaFiles.ReadFile("schemas/" + tool + "." + kind + ".json")
	if err != nil {
		panic(fmt.Sprintf("catalog: %s %s schema missing: %v", tool, kind, err))
	}
	return json.RawMessage(bytes.TrimSpace(b))
}

// ecmaRegexp runs schema patterns with ECMAScript semantics: the seed
// patterns use lookahead, which Go's RE2 engine cannot compile.
type ecmaRegexp struct{ re *regexp2.Regexp }

func (r ecmaRegexp) MatchString(s string) bool {
	ok, err := r.re.MatchString(s)
	return err == nil && ok
}

func (r ecmaRegexp) String() string { return r.re.String() }

func compileECMA(pattern string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(pattern, regexp2.ECMAScript)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	return ecmaRegexp{re}, nil
}

// compile turns a tool schema into a validator that asserts formats (uri, date-time) too.
func compile(name string, schema json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("parse schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.UseRegexpEngine(compileECMA)
	c.AssertFormat()
	url := "prickle:///" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("add schema %s: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("compile schema %s: %w", name, err)
	}
	return s, nil
}

// validate checks a JSON value against a compiled schema and, on failure,
// says which field is wrong and why, in one line an agent can act on.
func validate(s *jsonschema.Schema, raw json.RawMessage) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("arguments are not JSON: %w", err)
	}
	err = s.Validate(v)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	leaf := ve
	for len(leaf.Causes) > 0 {
		leaf = leaf.Causes[0]
	}
	field := "/" + strings.Join(leaf.InstanceLocation, "/")
	if field == "/" {
		field = "arguments"
	}
	msg := leaf.Error()
	// The library prefixes messages with the location; keep only the reason.
	if _, reason, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "at ") {
		msg = reason
	}
	return fmt.Errorf("%s: %s", field, msg)
}
