// Package cfn reads template.yaml, the product's CloudFormation/SAM
// declaration, as data: its DynamoDB tables (and stands them up on any
// endpoint: the local emulator, integration tests), its event rules and its
// stream sources. The local stack, the Lambda emulator runs and the tests
// all read the template through it, so nothing local drifts from what
// CloudFormation creates.
package cfn

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Template is a CloudFormation/SAM template read as YAML nodes, so resource
// types and intrinsic functions this package does not know are tolerated.
type Template struct {
	declared  map[string]bool   // parameter names
	defaults  map[string]string // parameter name → Default, when it has one
	resources []resource        // in template order
}

type resource struct {
	logicalID  string
	typ        string
	properties *yaml.Node
}

// LoadTemplate reads the template at path (usually template.yaml at the repository root).
func LoadTemplate(path string) (*Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read template: %w", err)
	}
	t, err := ParseTemplate(data)
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", path, err)
	}
	return t, nil
}

// ParseTemplate reads a template from YAML, keeping short-form tags such as
// !Sub, !Ref and !GetAtt as tagged nodes to resolve later.
func ParseTemplate(data []byte) (*Template, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse YAML: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("template is not a YAML mapping")
	}
	root := doc.Content[0]
	t := &Template{declared: map[string]bool{}, defaults: map[string]string{}}

	if params := mappingValue(root, "Parameters"); params != nil {
		for i := 0; i+1 < len(params.Content); i += 2 {
			name, decl := params.Content[i].Value, params.Content[i+1]
			t.declared[name] = true
			if def := mappingValue(decl, "Default"); def != nil && def.Kind == yaml.ScalarNode {
				t.defaults[name] = def.Value
			}
		}
	}

	resources := mappingValue(root, "Resources")
	if resources == nil || resources.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("template has no Resources mapping")
	}
	for i := 0; i+1 < len(resources.Content); i += 2 {
		id, body := resources.Content[i].Value, resources.Content[i+1]
		typ := mappingValue(body, "Type")
		if typ == nil || typ.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("resource %s has no Type", id)
		}
		t.resources = append(t.resources, resource{logicalID: id, typ: typ.Value, properties: mappingValue(body, "Properties")})
	}
	return t, nil
}

// mappingValue returns the value under key in a mapping node, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// resolver resolves with the caller's values merged over the template's
// defaults, refusing names the template does not declare so typos do not pass silently.
func (t *Template) resolver(given map[string]string) (resolver, error) {
	out := make(map[string]string, len(t.defaults))
	for k, v := range t.defaults {
		out[k] = v
	}
	var unknown []string
	for k, v := range given {
		if !t.declared[k] {
			unknown = append(unknown, k)
			continue
		}
		out[k] = v
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return resolver{}, fmt.Errorf("parameters %s are not declared in the template", strings.Join(unknown, ", "))
	}
	return resolver{params: out}, nil
}

// resolver replaces the intrinsic functions a table's properties may use
// (Ref and Sub on parameters, short or long form) with plain strings.
type resolver struct {
	params map[string]string
}

// resolve returns a copy of n in which every Ref and Sub became a plain
// scalar; any other intrinsic function is an error naming its line.
func (r resolver) resolve(n *yaml.Node) (*yaml.Node, error) {
	if n == nil {
		return nil, nil
	}
	switch {
	case n.Tag == "!Ref" || n.Tag == "!Sub":
		s, err := r.intrinsic(strings.TrimPrefix(n.Tag, "!"), n)
		if err != nil {
			return nil, err
		}
		return plainScalar(s), nil
	case strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!"):
		return nil, fmt.Errorf("line %d: %s cannot be resolved outside CloudFormation", n.Line, n.Tag)
	case n.Kind == yaml.MappingNode && len(n.Content) == 2 && isIntrinsicKey(n.Content[0].Value):
		fn := strings.TrimPrefix(n.Content[0].Value, "Fn::")
		if fn != "Ref" && fn != "Sub" {
			return nil, fmt.Errorf("line %d: %s cannot be resolved outside CloudFormation", n.Line, n.Content[0].Value)
		}
		s, err := r.intrinsic(fn, n.Content[1])
		if err != nil {
			return nil, err
		}
		return plainScalar(s), nil
	}
	out := *n
	out.Content = make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		rc, err := r.resolve(c)
		if err != nil {
			return nil, err
		}
		out.Content[i] = rc
	}
	return &out, nil
}

func isIntrinsicKey(k string) bool {
	return k == "Ref" || k == "Condition" || strings.HasPrefix(k, "Fn::")
}

// plainScalar is an untagged scalar, so "true" decodes as a bool and a name as a string.
func plainScalar(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Value: s}
}

// intrinsic evaluates Ref or Sub with arg, the node after the tag or key.
func (r resolver) intrinsic(fn string, arg *yaml.Node) (string, error) {
	switch fn {
	case "Ref":
		if arg.Kind != yaml.ScalarNode {
			return "", fmt.Errorf("line %d: Ref needs a name", arg.Line)
		}
		return r.ref(arg.Value, arg.Line)
	case "Sub":
		vars := map[string]string{}
		text := arg
		if arg.Kind == yaml.SequenceNode {
			if len(arg.Content) != 2 || arg.Content[1].Kind != yaml.MappingNode {
				return "", fmt.Errorf("line %d: Sub needs [string, {variables}]", arg.Line)
			}
			text = arg.Content[0]
			m := arg.Content[1]
			for i := 0; i+1 < len(m.Content); i += 2 {
				v, err := r.resolve(m.Content[i+1])
				if err != nil {
					return "", err
				}
				if v.Kind != yaml.ScalarNode {
					return "", fmt.Errorf("line %d: Sub variable %s is not a string", m.Content[i].Line, m.Content[i].Value)
				}
				vars[m.Content[i].Value] = v.Value
			}
		}
		if text.Kind != yaml.ScalarNode {
			return "", fmt.Errorf("line %d: Sub needs a string", text.Line)
		}
		return r.sub(text.Value, vars, text.Line)
	}
	return "", fmt.Errorf("line %d: %s cannot be resolved outside CloudFormation", arg.Line, fn)
}

func (r resolver) ref(name string, line int) (string, error) {
	if v, ok := r.params[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("line %d: Ref %s names no parameter with a value", line, name)
}

// subVar matches ${Name}, ${Res.Attr} and the literal escape ${!Name}.
var subVar = regexp.MustCompile(`\$\{([^}]*)\}`)

func (r resolver) sub(text string, vars map[string]string, line int) (string, error) {
	var firstErr error
	out := subVar.ReplaceAllStringFunc(text, func(m string) string {
		name := m[2 : len(m)-1]
		if strings.HasPrefix(name, "!") {
			return "${" + name[1:] + "}"
		}
		if v, ok := vars[name]; ok {
			return v
		}
		v, err := r.ref(name, line)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("!Sub %q: %w", text, err)
		}
		return v
	})
	return out, firstErr
}
