//go:build integration

package endpoint_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/mcp/endpoint"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
	"github.com/useprickle/prickle/shared/team/mint"
)

// callTool sends one MCP 2026-07-28 tools/call and returns whether the tool
// refused and the text of its answer.
func callTool(t *testing.T, h http.Handler, token, tool, args string) (int, bool, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"requests","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var resp struct {
		Result *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.Result == nil {
		return rec.Code, true, rec.Body.String()
	}
	text := ""
	for _, c := range resp.Result.Content {
		text += c.Text
	}
	return rec.Code, resp.Result.IsError, text
}

// team of the request tests: a project, two agents with tokens, a handler
// whose store counts its requests on the wire (and takes injected faults).
type wireTeam struct {
	fx     storetest.Fixture
	adm    *admin.Admin
	svc    *team.Service // over the fixture's own client: setup is not counted
	h      http.Handler
	wire   *storetest.Proxy
	tokens map[string]string
}

const (
	wireProject  = "website-v2"
	wireWriter   = "alice/writer"
	wireReviewer = "bob/reviewer"
)

func newWireTeam(t *testing.T) *wireTeam {
	t.Helper()
	ctx := context.Background()
	fx := storetest.New(t)
	wt := &wireTeam{fx: fx, adm: admin.New(fx.Store), svc: team.New(fx.Store), tokens: map[string]string{}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(wt.adm.CreateProject(ctx, team.Project{Slug: wireProject, Name: "Website v2", StepDeadline: step.DefaultPendingDeadline, OwnerApprovalTypes: []string{"doc"}}))
	must(wt.adm.CreateProject(ctx, team.Project{Slug: "mobile", Name: "Mobile"}))
	for _, o := range []string{"alice", "bob"} {
		must(wt.adm.CreateOwner(ctx, team.Owner{Name: o, Email: o + "@example.com"}))
	}
	for _, a := range []string{wireWriter, wireReviewer} {
		must(wt.adm.CreateAgent(ctx, a, []string{wireProject}))
		secret, err := wt.adm.MintAgentToken(ctx, a)
		must(err)
		wt.tokens[a] = secret
	}
	w := storetest.NewProxy(t)
	counted := w.Store(fx)
	h, err := endpoint.InProcess(endpoint.Config{Service: team.New(counted), Tokens: counted, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	must(err)
	wt.h, wt.wire = h, w
	return wt
}

// newTask hands a task from the reviewer to the writer (uncounted), moved on
// by the writer through the tools named.
func (wt *wireTeam) newTask(t *testing.T, moves ...string) string {
	t.Helper()
	ctx := context.Background()
	owner := func(a string) string { o, _, _ := strings.Cut(a, "/"); return o }
	writer := identity.Caller{Agent: wireWriter, Owner: owner(wireWriter), Kind: identity.KindAgent}
	out, err := wt.svc.HandOffTask(ctx, identity.Caller{Agent: wireReviewer, Owner: owner(wireReviewer), Kind: identity.KindAgent}, team.HandOffInput{
		Project: wireProject, Assignee: wireWriter, Packet: task.Packet{
			Task: "Draft the hero headline.", DeliverableType: "answer", AcceptanceCriteria: []string{"At most 8 words."},
		}})
	if err != nil {
		t.Fatal(err)
	}
	id := out.Task.ID
	for _, m := range moves {
		switch m {
		case "accept":
			_, err = wt.svc.AcceptTask(ctx, writer, team.AcceptInput{TaskID: id})
		case "return":
			_, err = wt.svc.ReturnResult(ctx, writer, team.ReturnResultInput{TaskID: id, Summary: "Try the demo today.",
				Evidence: []task.Evidence{{Kind: "note", Summary: "Two headlines."}}, Provenance: "agent_generated"})
		}
		if err != nil {
			t.Fatalf("%s %s: %v", m, id, err)
		}
	}
	return id
}

// TestRequestsPerToolCall drives real tool calls through the MCP endpoint
// and counts the DynamoDB requests each one sends on the wire (token lookup
// included): a change that adds a request to a tool fails here. The
// maxima are those measured so far.
func TestRequestsPerToolCall(t *testing.T) {
	wt := newWireTeam(t)
	ctx := context.Background()
	if _, err := wt.svc.UpdatePulse(ctx, identity.Caller{Agent: wireReviewer, Owner: "bob", Kind: identity.KindAgent}, team.UpdatePulseInput{Project: wireProject, Doing: "Reviewing."}); err != nil {
		t.Fatal(err)
	}
	writer, reviewer := wt.tokens[wireWriter], wt.tokens[wireReviewer]
	cases := []struct {
		tool  string
		max   int
		token func() string
		args  func() string
	}{
		{"get_task", 2, func() string { return writer }, func() string { return fmt.Sprintf(`{"task_id":%q}`, wt.newTask(t, "accept")) }},
		{"read_room", 4, func() string { return writer }, func() string { return `{"project":"website-v2"}` }},
		{"update_pulse", 2, func() string { return writer }, func() string { return `{"project":"website-v2","doing":"Drafting."}` }},
		// with task_id: the token, then the put and the check of the task's project in one transaction.
		{"update_pulse", 2, func() string { return writer }, func() string {
			return fmt.Sprintf(`{"project":"website-v2","doing":"Drafting.","task_id":%q}`, wt.newTask(t, "accept"))
		}},
		{"hand_off_task", 3, func() string { return reviewer }, func() string {
			return `{"project":"website-v2","assignee":"alice/writer","packet":{"task":"Fact-check the About page.","deliverable_type":"answer","acceptance_criteria":["Every claim has a source."]}}`
		}},
		{"accept_task", 3, func() string { return writer }, func() string { return fmt.Sprintf(`{"task_id":%q}`, wt.newTask(t)) }},
		{"decline_task", 3, func() string { return writer }, func() string { return fmt.Sprintf(`{"task_id":%q,"reason":"Not my area."}`, wt.newTask(t)) }},
		{"save_checkpoint", 3, func() string { return writer }, func() string {
			return fmt.Sprintf(`{"task_id":%q,"progress":"Two drafts."}`, wt.newTask(t, "accept"))
		}},
		{"return_result", 3, func() string { return writer }, func() string {
			return fmt.Sprintf(`{"task_id":%q,"summary":"Try the demo today.","evidence":[{"kind":"note","summary":"Two headlines."}],"provenance":"agent_generated"}`, wt.newTask(t, "accept"))
		}},
		{"cancel_task", 3, func() string { return reviewer }, func() string {
			return fmt.Sprintf(`{"task_id":%q,"reason":"No longer needed."}`, wt.newTask(t))
		}},
		// review_result also needs the project's settings and reads the tasks waiting on this one.
		{"review_result", 5, func() string { return reviewer }, func() string {
			return fmt.Sprintf(`{"task_id":%q,"verdict":"accept"}`, wt.newTask(t, "accept", "return"))
		}},
	}
	for _, c := range cases {
		token, args := c.token(), c.args()
		wt.wire.Take()
		code, refused, text := callTool(t, wt.h, token, c.tool, args)
		n, ops := wt.wire.Take()
		if refused {
			t.Errorf("%s %s: HTTP %d, refused: %s", c.tool, args, code, text)
			continue
		}
		t.Logf("%s: %d requests %v", c.tool, n, ops)
		if n > c.max {
			t.Errorf("%s sent %d DynamoDB requests %v, at most %d allowed", c.tool, n, ops, c.max)
		}
	}

	// request_step with a run token (first ask): the token, the task, the
	// project and the task's steps (at once), the grants, the transaction.
	id := wt.newTask(t, "accept")
	run, err := wt.adm.StartRun(ctx, mint.ByOperator, wireWriter, id, "")
	if err != nil {
		t.Fatal(err)
	}
	wt.wire.Take()
	_, refused, text := callTool(t, wt.h, run.RunToken, "request_step", `{"tool_name":"Bash","input":{"command":"git push origin main"},"kind":"outbound","target":"origin","reason":"Publish."}`)
	n, ops := wt.wire.Take()
	if refused {
		t.Fatalf("request_step refused: %s", text)
	}
	t.Logf("request_step: %d requests %v", n, ops)
	if n > 6 {
		t.Errorf("request_step sent %d DynamoDB requests %v, at most 6 allowed", n, ops)
	}
}

// TestRevocationAndMembershipApplyOnTheNextCall: the token lookup stays one
// strongly consistent read per call, and memberships travel with the token.
func TestRevocationAndMembershipApplyOnTheNextCall(t *testing.T) {
	wt := newWireTeam(t)
	ctx := context.Background()
	room := `{"project":"website-v2"}`
	if _, refused, text := callTool(t, wt.h, wt.tokens[wireWriter], "read_room", room); refused {
		t.Fatalf("read_room before: %s", text)
	}

	// Leaving a project applies at once to the agent's tokens.
	if err := wt.fx.Store.PutAgent(ctx, team.Agent{ID: wireWriter, Projects: []string{"mobile"}}); err != nil {
		t.Fatal(err)
	}
	if _, refused, text := callTool(t, wt.h, wt.tokens[wireWriter], "read_room", room); !refused || !strings.Contains(text, "no project website-v2 that alice/writer belongs to") {
		t.Errorf("read_room after leaving the project: refused %v, %q", refused, text)
	}
	if _, refused, text := callTool(t, wt.h, wt.tokens[wireWriter], "read_room", `{"project":"mobile"}`); refused {
		t.Errorf("read_room of the project joined: %s", text)
	}
	// A token minted later carries the current projects.
	later, err := wt.adm.MintAgentToken(ctx, wireWriter)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := wt.fx.Store.TokenByHash(ctx, identity.Hash(later))
	if err != nil {
		t.Fatal(err)
	}
	if !tok.ProjectsKnown || !slices.Equal(tok.Projects, []string{"mobile"}) {
		t.Errorf("new token carries %v (known %v), want [mobile]", tok.Projects, tok.ProjectsKnown)
	}

	// A revoked token is refused on the very next call.
	if _, err := wt.adm.RevokeAgentTokens(ctx, wireReviewer); err != nil {
		t.Fatal(err)
	}
	if code, refused, _ := callTool(t, wt.h, wt.tokens[wireReviewer], "read_room", room); !refused || code != http.StatusUnauthorized {
		t.Errorf("revoked token: HTTP %d refused %v, want 401", code, refused)
	}
}

// TestTokensStoredBeforeMembershipsStillWork: a token item written before
// tokens carried projects (no projects_known) falls back to reading the
// agent, and PutAgent backfills it.
func TestTokensStoredBeforeMembershipsStillWork(t *testing.T) {
	wt := newWireTeam(t)
	ctx := context.Background()
	hash := identity.Hash(wt.tokens[wireWriter])
	_, err := wt.fx.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        aws.String(wt.fx.Tables.Directory),
		Key:              map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "TOKEN#" + hash}, "sk": &types.AttributeValueMemberS{Value: "TOKEN"}},
		UpdateExpression: aws.String("REMOVE projects, projects_known"),
	})
	if err != nil {
		t.Fatal(err)
	}
	wt.wire.Take()
	if _, refused, text := callTool(t, wt.h, wt.tokens[wireWriter], "read_room", `{"project":"website-v2"}`); refused {
		t.Fatalf("read_room with an old token: %s", text)
	}
	if n, ops := wt.wire.Take(); ops["GetItem"] != 2 {
		t.Errorf("old token: %d requests %v, want the token and the agent read (2 GetItem)", n, ops)
	}
	if _, refused, _ := callTool(t, wt.h, wt.tokens[wireWriter], "read_room", `{"project":"mobile"}`); !refused {
		t.Error("old token read a project its agent is not in")
	}
	if err := wt.fx.Store.PutAgent(ctx, team.Agent{ID: wireWriter, Projects: []string{wireProject}}); err != nil {
		t.Fatal(err)
	}
	tok, err := wt.fx.Store.TokenByHash(ctx, hash)
	if err != nil {
		t.Fatal(err)
	}
	if !tok.ProjectsKnown || !slices.Equal(tok.Projects, []string{wireProject}) {
		t.Errorf("after PutAgent the old token carries %v (known %v)", tok.Projects, tok.ProjectsKnown)
	}
}
