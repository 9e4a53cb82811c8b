// Package template reads template.yaml as CloudFormation does (short-form
// tags, intrinsic functions, SAM function policies and roles) and checks the
// rights each function is given against the rights it needs.
package template

import (
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Template is the part of a template the rights and routing checks read.
type Template struct {
	Resources map[string]Resource
	// Conditions and Defaults (parameter name → Default) let the checks
	// say which resources a given set of parameters deploys.
	Conditions map[string]any
	Defaults   map[string]string
}

// Resource is one resource: its type and properties as plain Go values
// (map[string]any, []any, string), intrinsic functions in long form
// ({"Ref": x}, {"Fn::GetAtt": "X.Arn"}, {"Fn::Sub": s}, {"Fn::If": [...]}).
type Resource struct {
	Type       string
	Condition  string // the resource's Condition attribute, "" when it always exists
	Properties map[string]any
}

// Load reads a template file.
func Load(file string) (*Template, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Parse reads a template from YAML.
func Parse(data []byte) (*Template, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse YAML: %w", err)
	}
	if len(doc.Content) != 1 {
		return nil, fmt.Errorf("empty template")
	}
	root, ok := plain(doc.Content[0]).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("template is not a mapping")
	}
	res, ok := root["Resources"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("template has no Resources")
	}
	t := &Template{Resources: map[string]Resource{}, Defaults: map[string]string{}}
	t.Conditions, _ = root["Conditions"].(map[string]any)
	params, _ := root["Parameters"].(map[string]any)
	for name, p := range params {
		if def, ok := p.(map[string]any)["Default"]; ok {
			t.Defaults[name] = fmt.Sprint(def)
		}
	}
	for id, v := range res {
		m, _ := v.(map[string]any)
		typ, _ := m["Type"].(string)
		cond, _ := m["Condition"].(string)
		props, _ := m["Properties"].(map[string]any)
		t.Resources[id] = Resource{Type: typ, Condition: cond, Properties: props}
	}
	return t, nil
}

// plain turns a YAML node into Go values, short-form tags into long form.
func plain(n *yaml.Node) any {
	var v any
	switch n.Kind {
	case yaml.DocumentNode:
		return plain(n.Content[0])
	case yaml.AliasNode:
		return plain(n.Alias)
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = plain(n.Content[i+1])
		}
		v = m
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			l = append(l, plain(c))
		}
		v = l
	default:
		v = n.Value
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		name := strings.TrimPrefix(n.Tag, "!")
		if name != "Ref" && name != "Condition" {
			name = "Fn::" + name
		}
		return map[string]any{name: v}
	}
	return v
}

// Statement is one IAM policy statement as the template writes it.
type Statement struct {
	Sid       string
	Effect    string
	Actions   []string
	Resources []any // strings or intrinsic functions
	// Problem, when set, is why the statement cannot be checked (NotAction, a
	// managed policy, a SAM policy template): the checks report it as a violation.
	Problem string
}

// FunctionStatements returns every statement that applies to a SAM
// function: its Policies (inline documents only) or the AWS::IAM::Role it
// names. Both branches of an Fn::If count, as either may be deployed.
func (t *Template) FunctionStatements(fn string) ([]Statement, error) {
	r, ok := t.Resources[fn]
	if !ok || r.Type != "AWS::Serverless::Function" {
		return nil, fmt.Errorf("%s is not an AWS::Serverless::Function", fn)
	}
	var out []Statement
	if role, ok := r.Properties["Role"]; ok {
		id := getAttTarget(role)
		rr, ok := t.Resources[id]
		if !ok || rr.Type != "AWS::IAM::Role" {
			return []Statement{{Problem: fmt.Sprintf("Role %v is not an AWS::IAM::Role of this template", role)}}, nil
		}
		if m, ok := rr.Properties["ManagedPolicyArns"]; ok {
			out = append(out, Statement{Problem: fmt.Sprintf("role %s attaches managed policies %v", id, m)})
		}
		pols, _ := rr.Properties["Policies"].([]any)
		for _, p := range pols {
			pm, _ := p.(map[string]any)
			out = append(out, documentStatements(pm["PolicyDocument"])...)
		}
		for oid, o := range t.Resources {
			if o.Type == "AWS::IAM::Policy" || o.Type == "AWS::IAM::ManagedPolicy" || o.Type == "AWS::IAM::RolePolicy" {
				out = append(out, Statement{Problem: fmt.Sprintf("%s (%s) may add rights to role %s", oid, o.Type, id)})
			}
		}
		return out, nil
	}
	pols := r.Properties["Policies"]
	switch p := pols.(type) {
	case nil:
	case []any:
		for _, e := range p {
			out = append(out, policyStatements(e)...)
		}
	default:
		out = append(out, policyStatements(p)...)
	}
	return out, nil
}

// policyStatements reads one entry of a SAM function's Policies.
func policyStatements(p any) []Statement {
	switch v := p.(type) {
	case string:
		return []Statement{{Problem: "managed policy " + v}}
	case map[string]any:
		if _, ok := v["Statement"]; ok {
			return documentStatements(v)
		}
		for k := range v {
			return []Statement{{Problem: "SAM policy template or intrinsic " + k + " (write explicit statements)"}}
		}
	}
	return []Statement{{Problem: fmt.Sprintf("unreadable policy %v", p)}}
}

func documentStatements(doc any) []Statement {
	m, _ := doc.(map[string]any)
	var out []Statement
	var add func(s any)
	add = func(s any) {
		switch v := s.(type) {
		case []any:
			for _, e := range v {
				add(e)
			}
		case map[string]any:
			if branches, ok := v["Fn::If"].([]any); ok && len(branches) == 3 {
				add(branches[1])
				add(branches[2])
				return
			}
			if ref, ok := v["Ref"]; ok && ref == "AWS::NoValue" {
				return
			}
			out = append(out, statement(v))
		default:
			out = append(out, Statement{Problem: fmt.Sprintf("unreadable statement %v", s)})
		}
	}
	add(m["Statement"])
	return out
}

func statement(m map[string]any) Statement {
	s := Statement{}
	s.Sid, _ = m["Sid"].(string)
	s.Effect, _ = m["Effect"].(string)
	for _, k := range []string{"NotAction", "NotResource", "NotPrincipal"} {
		if _, ok := m[k]; ok {
			s.Problem = k + " is not allowed"
		}
	}
	for _, a := range list(m["Action"]) {
		if str, ok := a.(string); ok {
			s.Actions = append(s.Actions, str)
		} else {
			s.Problem = fmt.Sprintf("action %v is not a plain string", a)
		}
	}
	s.Resources = list(m["Resource"])
	if len(s.Actions) == 0 || len(s.Resources) == 0 {
		s.Problem = "statement without Action or Resource"
	}
	return s
}

func list(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	default:
		return []any{x}
	}
}

// getAttTarget returns X of {"Fn::GetAtt": "X.Attr"} or ["X", "Attr"].
func getAttTarget(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	switch g := m["Fn::GetAtt"].(type) {
	case string:
		id, _, _ := strings.Cut(g, ".")
		return id
	case []any:
		if len(g) > 0 {
			s, _ := g[0].(string)
			return s
		}
	}
	return ""
}

// ResourceTarget names what a statement's resource points at: the logical
// id it is built on (GetAtt X.Arn, Sub "${X.Arn}/..."), with its type, or
// "*" for a bare wildcard, or the literal text.
func (t *Template) ResourceTarget(r any) (id, typ, text string) {
	switch v := r.(type) {
	case string:
		return "", "", v
	case map[string]any:
		if x := getAttTarget(v); x != "" {
			return x, t.Resources[x].Type, fmt.Sprint(v["Fn::GetAtt"])
		}
		if ref, ok := v["Ref"].(string); ok {
			return ref, t.Resources[ref].Type, "Ref " + ref
		}
		if sub, ok := v["Fn::Sub"].(string); ok {
			if i := strings.Index(sub, "${"); i == 0 {
				name, _, _ := strings.Cut(sub[2:], "}")
				name, _, _ = strings.Cut(name, ".")
				if rr, ok := t.Resources[name]; ok {
					return name, rr.Type, sub
				}
			}
			return "", "", sub
		}
	}
	return "", "", fmt.Sprint(r)
}

// ActionMatches reports whether an IAM action pattern (with * and ?) grants action.
func ActionMatches(pattern, action string) bool {
	ok, _ := path.Match(strings.ToLower(pattern), strings.ToLower(action))
	return ok
}

// Functions returns the logical ids of the SAM functions, sorted.
func (t *Template) Functions() []string {
	var out []string
	for id, r := range t.Resources {
		if r.Type == "AWS::Serverless::Function" {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}
