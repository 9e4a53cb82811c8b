package web_test

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/mcp/catalog"
	"github.com/useprickle/prickle/shared/mcp/endpoint"
	"github.com/useprickle/prickle/shared/owners/web"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

// oneToken is a token directory of one agent token.
type oneToken struct{}

func (oneToken) TokenByHash(_ context.Context, hash string) (identity.Token, error) {
	if hash != identity.Hash("prk_a_reference") {
		return identity.Token{}, identity.ErrUnknownToken
	}
	return identity.Token{Kind: identity.KindAgent, Agent: "alice/writer"}, nil
}

// listedTools is what the MCP endpoint answers an agent token's tools/list.
func listedTools(t *testing.T) []map[string]any {
	t.Helper()
	h, err := endpoint.New(endpoint.Config{Service: team.New(teamtest.New()), Tokens: oneToken{}, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer prk_a_reference")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	b := w.Body.Bytes()
	var out struct {
		Result struct {
			Tools []map[string]any `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Result.Tools) != 11 {
		t.Fatalf("tools/list has %d tools: %s", len(out.Result.Tools), b)
	}
	return out.Result.Tools
}

func fetchReference(t *testing.T, query string) (int, string) {
	t.Helper()
	srv := httptest.NewServer(web.New(web.Config{Store: teamtest.New(), Signer: signer, Log: slog.New(slog.DiscardHandler)}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/docs/reference/mcp-tools" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var (
	articleRe = regexp.MustCompile(`(?s)<article class="tool" id="([a-z_]+)" data-tool="[a-z_]+">(.*?)</article>`)
	writesRe  = regexp.MustCompile(`data-writes="(true|false)"`)
	descRe    = regexp.MustCompile(`(?s)<div class="prose description" data-description>(.*?)</div>`)
	schemaRe  = regexp.MustCompile(`(?s)<pre[^>]*data-schema="(input|output)">(.*?)</pre>`)
	exampleRe = regexp.MustCompile(`(?s)<pre[^>]*data-example>(.*?)</pre>`)
	fieldRe   = regexp.MustCompile(`(?s)<th scope="row"><code>([a-z_]+)</code> <span class="tag[^"]*">(Required|Optional)</span></th>`)
)

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return v
}

// TestReferenceMatchesToolsList parses the rendered page back and compares
// it with what the MCP server's tools/list says: names and order,
// descriptions, writes (readOnlyHint), input and output schemas, required
// fields, and that each example is valid input.
func TestReferenceMatchesToolsList(t *testing.T) {
	status, page := fetchReference(t, "")
	if status != http.StatusOK {
		t.Fatalf("reference = %d", status)
	}
	for _, want := range []string{"Tools for the room.", "11 available tools", "11 matching tools", "Identity comes from the agent’s token",
		"View the full input schema", "View the full output schema", "Example input", "Returns", "Minimum characters: 1.", "Maximum characters: 64.",
		"One of: agent_generated, from_approved_context, owner_instruction.", `Default: &#34;agent_generated&#34;.`} {
		if !strings.Contains(page, want) {
			t.Errorf("reference lacks %q", want)
		}
	}
	listed := map[string]map[string]any{}
	for _, tl := range listedTools(t) {
		listed[tl["name"].(string)] = tl
	}
	arts := articleRe.FindAllStringSubmatch(page, -1)
	if len(arts) != len(listed) {
		t.Fatalf("page has %d tools, tools/list %d", len(arts), len(listed))
	}
	for i, a := range arts {
		name, body := a[1], a[2]
		tool, ok := listed[name]
		if !ok || name != catalog.All()[i].Name {
			t.Errorf("tool %d: page %s is not in tools/list, or not in the catalog's order", i, name)
			continue
		}
		ann, _ := tool["annotations"].(map[string]any)
		if w := writesRe.FindStringSubmatch(body); w == nil || (w[1] == "true") != !ann["readOnlyHint"].(bool) {
			t.Errorf("%s: writes %v, readOnlyHint %v", name, w, ann["readOnlyHint"])
		}
		if d := descRe.FindStringSubmatch(body); d == nil || html.UnescapeString(d[1]) != tool["description"] {
			t.Errorf("%s: description differs from tools/list", name)
		}
		schemas := map[string]any{}
		for _, m := range schemaRe.FindAllStringSubmatch(body, -1) {
			schemas[m[1]] = decodeJSON(t, html.UnescapeString(m[2]))
		}
		if !reflect.DeepEqual(schemas["input"], tool["inputSchema"]) {
			t.Errorf("%s: input schema on the page differs from tools/list", name)
		}
		if !reflect.DeepEqual(schemas["output"], tool["outputSchema"]) {
			t.Errorf("%s: output schema on the page differs from tools/list", name)
		}
		in := tool["inputSchema"].(map[string]any)
		props := in["properties"].(map[string]any)
		required := map[string]bool{}
		if req, ok := in["required"].([]any); ok {
			for _, r := range req {
				required[r.(string)] = true
			}
		}
		rows := fieldRe.FindAllStringSubmatch(body, -1)
		if len(rows) != len(props) {
			t.Errorf("%s: %d input rows, %d properties", name, len(rows), len(props))
		}
		for _, r := range rows {
			if _, ok := props[r[1]]; !ok {
				t.Errorf("%s: row %s is not a property", name, r[1])
			}
			if (r[2] == "Required") != required[r[1]] {
				t.Errorf("%s.%s: page says %s", name, r[1], r[2])
			}
		}
		ex := exampleRe.FindStringSubmatch(body)
		if ex == nil {
			t.Errorf("%s: no example", name)
			continue
		}
		tl, _ := catalog.Lookup(name)
		if err := tl.ValidateInput(json.RawMessage(html.UnescapeString(ex[1]))); err != nil {
			t.Errorf("%s: the example on the page is not valid input: %v", name, err)
		}
	}
	if len(web.ToolDocs()) != len(catalog.All()) {
		t.Error("ToolDocs and the catalog differ in length")
	}
}

var tags = regexp.MustCompile(`<[^>]+>`)

func TestReferenceOneTool(t *testing.T) {
	fetch := func(q string) (int, string) {
		status, page := fetchReference(t, q)
		return status, html.UnescapeString(tags.ReplaceAllString(page, ""))
	}
	status, page := fetch("?tool=return_result")
	if status != http.StatusOK || strings.Count(page, "View the full input schema") != 1 || !strings.Contains(page, "1 matching tool") ||
		!strings.Contains(page, "Writes project data") || !strings.Contains(page, "Minimum items: 1. Maximum items: 20.") {
		t.Errorf("?tool=return_result = %d:\n%s", status, page)
	}
	status, page = fetch("?tool=read_room")
	if status != http.StatusOK || !strings.Contains(page, "Read only") || !strings.Contains(page, "Minimum: 1. Maximum: 100.") {
		t.Errorf("?tool=read_room = %d", status)
	}
	if strings.Contains(page, "With a run token") {
		t.Error("?tool=read_room carries request_step's run-token note")
	}
	status, page = fetch("?tool=request_step")
	if status != http.StatusOK || !strings.Contains(page, "With a run token") || !strings.Contains(page, "no structuredContent") {
		t.Errorf("?tool=request_step = %d does not say how it answers a run token", status)
	}
	if !strings.Contains(page, catalog.PauseNote) {
		t.Error("?tool=request_step does not say how a woken run pauses on the asked call and resumes")
	}
	status, page = fetch("?tool=nope")
	if status != http.StatusNotFound || !strings.Contains(page, "0 matching tools") {
		t.Errorf("?tool=nope = %d", status)
	}
}
