package template

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Route is one route of an API's OpenAPI body and the function behind it,
// so the checks can compare the REST and HTTP fronts and their permissions.
type Route struct {
	Method   string // upper case; ANY for x-amazon-apigateway-any-method
	Path     string // as the body writes it, e.g. /a/{token}
	Function string // logical id of the function the integration invokes
	Payload  string // payloadFormatVersion ("" on REST APIs: always 1.0)
}

// Permission is one AWS::Lambda::Permission letting an API invoke a function.
type Permission struct {
	ID        string
	Function  string // logical id (FunctionName: !Ref X)
	API       string // logical id of the API its SourceArn names
	Pattern   string // the SourceArn after the API id: <stage>/<method>/<path>, with * wildcards
	Principal string
	Condition string
}

var integrationURI = regexp.MustCompile(`/functions/\$\{(\w+)\.Arn\}/invocations$`)

// Routes reads every route of an API's DefinitionBody, sorted by path and method.
func (t *Template) Routes(api string) ([]Route, error) {
	r, ok := t.Resources[api]
	if !ok {
		return nil, fmt.Errorf("no resource %s", api)
	}
	body, _ := r.Properties["DefinitionBody"].(map[string]any)
	paths, _ := body["paths"].(map[string]any)
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s has no DefinitionBody paths", api)
	}
	var out []Route
	for p, ops := range paths {
		m, _ := ops.(map[string]any)
		for method, op := range m {
			integ, _ := op.(map[string]any)["x-amazon-apigateway-integration"].(map[string]any)
			uri, _ := integ["uri"].(map[string]any)["Fn::Sub"].(string)
			fn := integrationURI.FindStringSubmatch(uri)
			if fn == nil || integ["type"] != "aws_proxy" {
				return nil, fmt.Errorf("%s %s %s: not a Lambda proxy integration: %v", api, method, p, integ)
			}
			if method == "x-amazon-apigateway-any-method" {
				method = "any"
			}
			payload, _ := integ["payloadFormatVersion"].(string)
			out = append(out, Route{Method: strings.ToUpper(method), Path: p, Function: fn[1], Payload: payload})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Method < out[j].Method
	})
	return out, nil
}

var sourceARN = regexp.MustCompile(`^arn:\$\{AWS::Partition\}:execute-api:\$\{AWS::Region\}:\$\{AWS::AccountId\}:\$\{(\w+)\}/(.+)$`)

// Permissions returns the Lambda permissions whose SourceArn names api.
func (t *Template) Permissions(api string) []Permission {
	var out []Permission
	for id, r := range t.Resources {
		if r.Type != "AWS::Lambda::Permission" {
			continue
		}
		sub, _ := r.Properties["SourceArn"].(map[string]any)["Fn::Sub"].(string)
		m := sourceARN.FindStringSubmatch(sub)
		if m == nil || m[1] != api {
			continue
		}
		fn, _ := r.Properties["FunctionName"].(map[string]any)["Ref"].(string)
		principal, _ := r.Properties["Principal"].(string)
		out = append(out, Permission{ID: id, Function: fn, API: api, Pattern: m[2], Principal: principal, Condition: r.Condition})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Allows reports whether the permission lets its API invoke the function
// for a request of method to path on any stage (path parameters as one segment).
func (p Permission) Allows(method, routePath string) bool {
	concrete := regexp.MustCompile(`\{[^}/]+\+?\}`).ReplaceAllString(routePath, "x")
	if method == "ANY" {
		method = "DELETE" // a method no narrower permission names
	}
	return arnLike(p.Pattern, "dev/"+method+concrete)
}

// arnLike is IAM's ArnLike on the part after the API id: * matches any
// run of characters (also none, and across /), ? one character.
func arnLike(pattern, s string) bool {
	re := "^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(pattern)) + "$"
	return regexp.MustCompile(re).MatchString(s)
}

// Holds evaluates a named condition of the template with the given
// parameters over the defaults (Equals, Not, And, Or, Condition, Ref).
func (t *Template) Holds(cond string, params map[string]string) (bool, error) {
	if cond == "" {
		return true, nil
	}
	c, ok := t.Conditions[cond]
	if !ok {
		return false, fmt.Errorf("no condition %s", cond)
	}
	return t.eval(c, params)
}

func (t *Template) eval(c any, params map[string]string) (bool, error) {
	m, ok := c.(map[string]any)
	if !ok || len(m) != 1 {
		return false, fmt.Errorf("condition %v is not one function", c)
	}
	for fn, arg := range m {
		args, _ := arg.([]any)
		switch fn {
		case "Condition":
			name, _ := arg.(string)
			return t.Holds(name, params)
		case "Fn::Not":
			if len(args) != 1 {
				return false, fmt.Errorf("Fn::Not takes one condition: %v", arg)
			}
			v, err := t.eval(args[0], params)
			return !v, err
		case "Fn::And", "Fn::Or":
			and := fn == "Fn::And"
			for _, a := range args {
				v, err := t.eval(a, params)
				if err != nil || v != and {
					return v, err
				}
			}
			return and, nil
		case "Fn::Equals":
			if len(args) != 2 {
				return false, fmt.Errorf("Fn::Equals takes two values: %v", arg)
			}
			a, err := t.value(args[0], params)
			if err != nil {
				return false, err
			}
			b, err := t.value(args[1], params)
			return a == b, err
		}
		return false, fmt.Errorf("condition function %s is not supported here", fn)
	}
	return false, nil
}

func (t *Template) value(v any, params map[string]string) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case map[string]any:
		if ref, ok := x["Ref"].(string); ok {
			if p, ok := params[ref]; ok {
				return p, nil
			}
			if d, ok := t.Defaults[ref]; ok {
				return d, nil
			}
			return "", fmt.Errorf("parameter %s has no value", ref)
		}
	}
	return "", fmt.Errorf("value %v is not a string or a parameter", v)
}

// Deployed returns the logical ids of the resources of the given types
// that exist with these parameters, sorted.
func (t *Template) Deployed(params map[string]string, types ...string) ([]string, error) {
	var out []string
	for id, r := range t.Resources {
		match := false
		for _, typ := range types {
			m, _ := path.Match(typ, r.Type)
			match = match || m
		}
		if !match {
			continue
		}
		ok, err := t.Holds(r.Condition, params)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		if ok {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out, nil
}
