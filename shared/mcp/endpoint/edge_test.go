package endpoint_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/mcp/endpoint"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

// handOffs records the tool calls a front hands on, and answers each.
type handOffs struct {
	tools  []string
	bodies []string
}

func (h *handOffs) route(tool string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.tools = append(h.tools, tool)
		h.bodies = append(h.bodies, string(body))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"handed_to":"` + tool + `"}}`))
	})
}

// edge is one endpoint over the in-memory store with alice/writer's agent
// token, its request log in a buffer; front hands tool calls to route.
func edge(t *testing.T, front bool) (http.Handler, *handOffs, *bytes.Buffer) {
	t.Helper()
	st := teamtest.New()
	st.AddProject(team.Project{Slug: "website-v2", Name: "Website v2", StepDeadline: time.Hour})
	st.AddAgent(team.Agent{ID: "alice/writer", Owner: "alice", Projects: []string{"website-v2"}})
	logs := &bytes.Buffer{}
	routes := &handOffs{}
	cfg := endpoint.Config{
		Service: team.New(st),
		Tokens:  tokens{agentSecret: {Kind: identity.KindAgent, Agent: "alice/writer"}},
		Log:     slog.New(slog.NewJSONHandler(logs, nil)),
	}
	if front {
		cfg.ToolHandler = routes.route
	}
	h, err := endpoint.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h, routes, logs
}

// rpcAnswer is the JSON-RPC answer of one request, and the request's log line.
type rpcAnswer struct {
	status int
	header http.Header
	code   int
	msg    string
	result map[string]any
	line   map[string]any
}

func serve(t *testing.T, h http.Handler, logs *bytes.Buffer, req *http.Request) rpcAnswer {
	t.Helper()
	logs.Reset()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	var resp struct {
		Result map[string]any `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		t.Fatalf("HTTP %d: body is not JSON-RPC: %q", w.Code, w.Body.String())
	}
	a := rpcAnswer{status: w.Code, header: w.Header(), result: resp.Result}
	if resp.Error != nil {
		a.code, a.msg = resp.Error.Code, resp.Error.Message
	}
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "mcp request" {
			a.line = m
		}
	}
	if a.line == nil {
		t.Fatalf("no request log line in %q", logs.String())
	}
	return a
}

func toolCall(name string, args map[string]any) map[string]any {
	return map[string]any{"name": name, "arguments": args}
}

// TestEdge: what the endpoint answers before and around the MCP server, in
// both protocol eras: 401 without a valid bearer token (with the challenge
// RFC 6750 asks for), 413 over 1 MiB, -32602 naming the argument that is
// wrong, an Mcp-Name header that disagrees with the body never validated nor
// handed on, and a front handing a valid call to the tool's own handler
// with the caller's original body. Each request leaves one log line saying
// how it ended.
func TestEdge(t *testing.T) {
	getTask := toolCall("get_task", map[string]any{"task_id": "tsk_1"})
	tests := []struct {
		name    string
		front   bool
		secret  string
		auth    string // replaces the Authorization header when set
		params  map[string]any
		tool    string // the Mcp-Name header in the 2026-07-28 era
		mutate  func(*http.Request)
		status  map[bool]int // by era: modern or not
		code    int
		msgHas  []string
		outcome string
		route   string
		logged  string // the tool the log line names: none before the body is read
		handed  []string
	}{
		{name: "no token", auth: "-", params: getTask, tool: "get_task",
			status: map[bool]int{false: 401, true: 401}, code: -32001, msgHas: []string{"Bearer"}, outcome: "unauthorized", route: "served"},
		{name: "unknown token", secret: "prk_a_nobody", params: getTask, tool: "get_task",
			status: map[bool]int{false: 401, true: 401}, code: -32001, msgHas: []string{"unauthorized"}, outcome: "unauthorized", route: "served"},
		{name: "not a bearer token", auth: "Basic " + agentSecret, params: getTask, tool: "get_task",
			status: map[bool]int{false: 401, true: 401}, code: -32001, outcome: "unauthorized", route: "served"},
		{name: "body over 1 MiB", secret: agentSecret, params: toolCall("get_task", map[string]any{"task_id": strings.Repeat("x", endpoint.MaxBody)}), tool: "get_task",
			status: map[bool]int{false: 413, true: 413}, code: -32600, msgHas: []string{"1 MiB"}, outcome: "too_large", route: "served"},
		{name: "argument of the wrong type", secret: agentSecret, params: toolCall("get_task", map[string]any{"task_id": 7}), tool: "get_task",
			status: map[bool]int{false: 200, true: 400}, code: -32602, msgHas: []string{"get_task", "task_id"}, outcome: "invalid_params", route: "served", logged: "get_task"},
		{name: "missing argument", secret: agentSecret, params: toolCall("read_room", map[string]any{}), tool: "read_room",
			status: map[bool]int{false: 200, true: 400}, code: -32602, msgHas: []string{"read_room", "project"}, outcome: "invalid_params", route: "served", logged: "read_room"},
		{name: "invalid arguments are not handed on", front: true, secret: agentSecret, params: toolCall("get_task", map[string]any{"task_id": 7}), tool: "get_task",
			status: map[bool]int{false: 200, true: 400}, code: -32602, msgHas: []string{"task_id"}, outcome: "invalid_params", route: "served", logged: "get_task"},
		{name: "hand-off", front: true, secret: agentSecret, params: getTask, tool: "get_task",
			status: map[bool]int{false: 200, true: 200}, outcome: "ok", route: "handed to get_task", logged: "get_task", handed: []string{"get_task"}},
	}
	for _, e := range eras {
		for _, tt := range tests {
			t.Run(e.name+"/"+tt.name, func(t *testing.T) {
				h, routes, logs := edge(t, tt.front)
				req := e.request(t, tt.secret, "tools/call", tt.tool, tt.params)
				switch tt.auth {
				case "":
				case "-":
					req.Header.Del("Authorization")
				default:
					req.Header.Set("Authorization", tt.auth)
				}
				a := serve(t, h, logs, req)
				if a.status != tt.status[e.modern] || a.code != tt.code {
					t.Fatalf("HTTP %d, JSON-RPC code %d (%s); want HTTP %d, code %d", a.status, a.code, a.msg, tt.status[e.modern], tt.code)
				}
				for _, s := range tt.msgHas {
					if !strings.Contains(a.msg, s) {
						t.Errorf("message %q does not name %q", a.msg, s)
					}
				}
				if a.status == http.StatusUnauthorized {
					want := `Bearer realm="prickle"`
					if tt.auth != "-" {
						want += `, error="invalid_token", error_description="unknown, revoked or expired token"`
					}
					if got := a.header.Get("WWW-Authenticate"); got != want {
						t.Errorf("WWW-Authenticate = %q, want %q", got, want)
					}
				}
				caller := "alice/writer"
				if a.status == http.StatusUnauthorized {
					caller = ""
				}
				if a.line["outcome"] != tt.outcome || a.line["route"] != tt.route || a.line["tool"] != tt.logged || a.line["caller"] != caller {
					t.Errorf("log line %v: want outcome %q, route %q, tool %q, caller %q", a.line, tt.outcome, tt.route, tt.logged, caller)
				}
				if strings.Join(routes.tools, ",") != strings.Join(tt.handed, ",") {
					t.Errorf("handed to %v, want %v", routes.tools, tt.handed)
				}
				if len(tt.handed) > 0 {
					if a.result["handed_to"] != tt.handed[0] {
						t.Errorf("answer %v is not the tool handler's", a.result)
					}
					var sent struct {
						Params map[string]any `json:"params"`
					}
					if err := json.Unmarshal([]byte(routes.bodies[0]), &sent); err != nil || sent.Params["name"] != "get_task" {
						t.Errorf("the tool handler got %q, not the caller's body", routes.bodies[0])
					}
				}
				if strings.Contains(logs.String(), agentSecret) {
					t.Error("the log holds the bearer token")
				}
			})
		}
	}
}

// TestMcpNameMismatch: in 2026-07-28 a tool call whose Mcp-Name header
// names another tool than its body is neither checked against the catalog
// nor handed on (a gateway routing by header would send it elsewhere): the
// MCP server refuses it, and the front's tool handlers see nothing.
func TestMcpNameMismatch(t *testing.T) {
	modern := eras[1]
	if !modern.modern {
		t.Fatal("eras[1] is not 2026-07-28")
	}
	for _, front := range []bool{false, true} {
		h, routes, logs := edge(t, front)
		// Invalid arguments for get_task: checked, they would be -32602.
		req := modern.request(t, agentSecret, "tools/call", "read_room", toolCall("get_task", map[string]any{"task_id": 7}))
		a := serve(t, h, logs, req)
		if a.status != http.StatusBadRequest || a.code == 0 || a.code == -32602 || !strings.Contains(a.msg, "Mcp-Name") {
			t.Errorf("front %v: HTTP %d, code %d (%s); want the MCP server's refusal naming Mcp-Name", front, a.status, a.code, a.msg)
		}
		if len(routes.tools) != 0 {
			t.Errorf("front %v: handed to %v", front, routes.tools)
		}
		if a.line["route"] != "served" {
			t.Errorf("front %v: log line %v, want route served", front, a.line)
		}
	}
}
