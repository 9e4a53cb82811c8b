package template

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// apiTypes are every resource type that is an API Gateway API (SAM's or
// CloudFormation's own).
var apiTypes = []string{"AWS::Serverless::Api", "AWS::Serverless::HttpApi", "AWS::ApiGateway::RestApi", "AWS::ApiGatewayV2::Api"}

// TestExactlyOneFrontPerMode: ApiGateway=rest deploys the core REST API and
// one per tool, and no HTTP API; ApiGateway=http deploys the HTTP API only.
// The functions are the same in both modes.
func TestExactlyOneFrontPerMode(t *testing.T) {
	tpl := load(t)
	var toolAPIs []string
	for _, fn := range tools {
		toolAPIs = append(toolAPIs, strings.TrimSuffix(fn, "Function")+"Api")
	}
	rest := append([]string{"CoreApi"}, toolAPIs...)
	slices.Sort(rest)
	cases := []struct {
		params map[string]string
		want   []string
	}{
		{map[string]string{}, rest}, // the default is rest
		{map[string]string{"ApiGateway": "rest"}, rest},
		{map[string]string{"ApiGateway": "rest", "DomainName": "mcp.example.com"}, rest},
		{map[string]string{"ApiGateway": "http"}, []string{"HttpApi"}},
		{map[string]string{"ApiGateway": "http", "DomainName": "mcp.example.com"}, []string{"HttpApi"}},
	}
	for _, tc := range cases {
		got, err := tpl.Deployed(tc.params, apiTypes...)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v deploys APIs %v, want %v", tc.params, got, tc.want)
		}
		fns, err := tpl.Deployed(tc.params, "AWS::Serverless::Function")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fns, tpl.Functions()) {
			t.Errorf("%v deploys functions %v, want all of %v", tc.params, fns, tpl.Functions())
		}
		// The custom domain: routing rules (nested stack) in rest mode, an API mapping in http mode.
		domains, err := tpl.Deployed(tc.params, "AWS::Serverless::Application", "AWS::ApiGatewayV2::DomainName")
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		switch {
		case tc.params["DomainName"] == "":
		case tc.params["ApiGateway"] == "http":
			want = []string{"HttpDomain"}
		default:
			want = []string{"Routing"}
		}
		if !slices.Equal(domains, want) {
			t.Errorf("%v deploys domain resources %v, want %v", tc.params, domains, want)
		}
	}
}

// TestBothFrontsServeTheSameRoutes: the HTTP API serves exactly the core
// REST API's routes, to the same functions, in payload format 2.0; each
// tool's REST API serves only POST /mcp, to its own function.
func TestBothFrontsServeTheSameRoutes(t *testing.T) {
	tpl := load(t)
	core, err := tpl.Routes("CoreApi")
	if err != nil {
		t.Fatal(err)
	}
	httpRoutes, err := tpl.Routes("HttpApi")
	if err != nil {
		t.Fatal(err)
	}
	var asREST []Route
	for _, r := range httpRoutes {
		if r.Payload != "2.0" {
			t.Errorf("HttpApi %s %s: payloadFormatVersion %q, want 2.0", r.Method, r.Path, r.Payload)
		}
		r.Payload = ""
		asREST = append(asREST, r)
	}
	if !reflect.DeepEqual(asREST, core) {
		t.Errorf("HttpApi routes %v, want the core API's %v", asREST, core)
	}
	want := map[string]string{"ANY /mcp": "McpFunction", "GET /": "WebFunction", "GET /a/{token}": "WebFunction",
		"POST /a/{token}": "WebFunction", "GET /{proxy+}": "WebFunction", "POST /{proxy+}": "WebFunction",
		"POST /slack/interactivity": "SlackFunction",
		"POST /runner/claim":        "RunnerApiFunction", "POST /runner/ack": "RunnerApiFunction",
		"POST /runner/extend": "RunnerApiFunction", "POST /runner/ended": "RunnerApiFunction", "POST /runner/start": "RunnerApiFunction",
		"POST /runner/project":      "RunnerApiFunction",
		"GET /.well-known/{proxy+}": "OauthFunction", "GET /oauth/{proxy+}": "OauthFunction",
		"POST /oauth/{proxy+}": "OauthFunction", "OPTIONS /oauth/{proxy+}": "OauthFunction"}
	got := map[string]string{}
	for _, r := range core {
		got[r.Method+" "+r.Path] = r.Function
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("core routes %v, want %v", got, want)
	}
	for _, fn := range tools {
		api := strings.TrimSuffix(fn, "Function") + "Api"
		routes, err := tpl.Routes(api)
		if err != nil {
			t.Fatal(err)
		}
		if want := []Route{{Method: "POST", Path: "/mcp", Function: fn}}; !reflect.DeepEqual(routes, want) {
			t.Errorf("%s routes %v, want %v", api, routes, want)
		}
	}
}

// TestEveryRouteIsPermittedAndNoMore: each route's function lets its API
// (and only API Gateway) invoke it, under the API's own condition, so no
// permission outlives its API in the other mode; and every permission
// covers a route of its function, so none is left over.
func TestEveryRouteIsPermittedAndNoMore(t *testing.T) {
	tpl := load(t)
	apis := []string{"CoreApi", "HttpApi"}
	for _, fn := range tools {
		apis = append(apis, strings.TrimSuffix(fn, "Function")+"Api")
	}
	for _, api := range apis {
		routes, err := tpl.Routes(api)
		if err != nil {
			t.Fatal(err)
		}
		perms := tpl.Permissions(api)
		for _, r := range routes {
			ok := false
			for _, p := range perms {
				ok = ok || (p.Function == r.Function && p.Allows(r.Method, r.Path))
			}
			if !ok {
				t.Errorf("%s %s %s → %s: no permission lets %s invoke it", api, r.Method, r.Path, r.Function, api)
			}
		}
		for _, p := range perms {
			if p.Condition != tpl.Resources[api].Condition || p.Condition == "" {
				t.Errorf("%s: condition %q, want its API %s's %q", p.ID, p.Condition, api, tpl.Resources[api].Condition)
			}
			if p.Principal != "apigateway.amazonaws.com" {
				t.Errorf("%s: principal %q, want apigateway.amazonaws.com", p.ID, p.Principal)
			}
			used := false
			for _, r := range routes {
				used = used || (r.Function == p.Function && p.Allows(r.Method, r.Path))
			}
			if !used {
				t.Errorf("%s lets %s invoke %s on %s, which routes nothing there", p.ID, api, p.Function, p.Pattern)
			}
		}
	}
}

func TestPermissionAllows(t *testing.T) {
	cases := []struct {
		pattern, method, path string
		want                  bool
	}{
		{"*/*/mcp", "ANY", "/mcp", true},
		{"*/POST/mcp", "ANY", "/mcp", false},
		{"*/POST/mcp", "POST", "/mcp", true},
		{"*/POST/mcp", "GET", "/mcp", false},
		{"*/GET/*", "GET", "/", true},
		{"*/GET/*", "GET", "/{proxy+}", true},
		{"*/GET/*", "POST", "/a/{token}", false},
		{"*/POST/a/*", "POST", "/a/{token}", true},
		{"*/POST/slack/interactivity", "POST", "/slack/interactivity", true},
		{"*/POST/slack/interactivity", "POST", "/mcp", false},
	}
	for _, tc := range cases {
		if got := (Permission{Pattern: tc.pattern}).Allows(tc.method, tc.path); got != tc.want {
			t.Errorf("%s allows %s %s = %v, want %v", tc.pattern, tc.method, tc.path, got, tc.want)
		}
	}
}

func TestHoldsEvaluatesConditions(t *testing.T) {
	tpl, err := Parse([]byte(`
Parameters:
  Mode: {Type: String, Default: a}
  Name: {Type: String, Default: ""}
Conditions:
  IsA: !Equals [!Ref Mode, a]
  HasName: !Not [!Equals [!Ref Name, ""]]
  AWithName: !And [!Condition IsA, !Condition HasName]
  AOrName: !Or [!Condition IsA, !Condition HasName]
Resources:
  Q: {Type: AWS::SQS::Queue, Condition: AWithName}
`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		cond   string
		params map[string]string
		want   bool
	}{
		{"IsA", nil, true},
		{"IsA", map[string]string{"Mode": "b"}, false},
		{"HasName", nil, false},
		{"AWithName", map[string]string{"Name": "x"}, true},
		{"AWithName", map[string]string{"Name": "x", "Mode": "b"}, false},
		{"AOrName", map[string]string{"Mode": "b"}, false},
		{"AOrName", map[string]string{"Mode": "b", "Name": "x"}, true},
	}
	for _, tc := range cases {
		got, err := tpl.Holds(tc.cond, tc.params)
		if err != nil || got != tc.want {
			t.Errorf("%s with %v = %v (%v), want %v", tc.cond, tc.params, got, err, tc.want)
		}
	}
	if _, err := tpl.Holds("Missing", nil); err == nil {
		t.Error("an unknown condition evaluated without error")
	}
}
