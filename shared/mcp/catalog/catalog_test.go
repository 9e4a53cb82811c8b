package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/mcp/catalog"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

var names = []string{"read_room", "get_task", "hand_off_task", "accept_task", "decline_task", "save_checkpoint",
	"request_step", "return_result", "review_result", "cancel_task", "update_pulse"}

func TestAllIsTheElevenToolsInOrder(t *testing.T) {
	var got []string
	for _, tl := range catalog.All() {
		got = append(got, tl.Name)
		if l, ok := catalog.Lookup(tl.Name); !ok || l != tl {
			t.Errorf("Lookup(%s) does not find the catalog's tool", tl.Name)
		}
	}
	if !slices.Equal(got, names) {
		t.Errorf("All() = %v\n want %v", got, names)
	}
	if _, ok := catalog.Lookup("preview_packet"); ok {
		t.Error("Lookup found a tool the catalog does not have")
	}
}

func parse(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return v
}

func TestMCPToolCarriesTheSchemaFilesAndAnnotations(t *testing.T) {
	readOnly := map[string]bool{"read_room": true, "get_task": true}
	destructive := map[string]bool{"decline_task": true, "review_result": true, "cancel_task": true}
	for _, tl := range catalog.All() {
		t.Run(tl.Name, func(t *testing.T) {
			b, err := json.Marshal(tl.MCPTool())
			if err != nil {
				t.Fatalf("marshal mcp.Tool: %v", err)
			}
			var got struct {
				Name         string          `json:"name"`
				Description  string          `json:"description"`
				InputSchema  json.RawMessage `json:"inputSchema"`
				OutputSchema json.RawMessage `json:"outputSchema"`
				Annotations  struct {
					Title           string `json:"title"`
					ReadOnlyHint    *bool  `json:"readOnlyHint"`
					DestructiveHint *bool  `json:"destructiveHint"`
					IdempotentHint  *bool  `json:"idempotentHint"`
				} `json:"annotations"`
			}
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			for kind, raw := range map[string]json.RawMessage{"input": got.InputSchema, "output": got.OutputSchema} {
				file, err := os.ReadFile("schemas/" + tl.Name + "." + kind + ".json")
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(parse(t, raw), parse(t, file)) {
					t.Errorf("%sSchema differs from schemas/%s.%s.json", kind, tl.Name, kind)
				}
			}
			if got.Name != tl.Name || got.Description == "" || got.Annotations.Title == "" {
				t.Errorf("name %q, description %q, title %q: want all set", got.Name, got.Description, got.Annotations.Title)
			}
			a := got.Annotations
			if a.ReadOnlyHint == nil || *a.ReadOnlyHint != readOnly[tl.Name] {
				t.Errorf("readOnlyHint = %v, want %v", a.ReadOnlyHint, readOnly[tl.Name])
			}
			if a.DestructiveHint == nil || *a.DestructiveHint != destructive[tl.Name] {
				t.Errorf("destructiveHint = %v, want %v", a.DestructiveHint, destructive[tl.Name])
			}
			if a.IdempotentHint == nil || (readOnly[tl.Name] && !*a.IdempotentHint) {
				t.Errorf("idempotentHint = %v; a read-only tool is idempotent", a.IdempotentHint)
			}
		})
	}
}

func TestExamplesValidate(t *testing.T) {
	for _, tl := range catalog.All() {
		t.Run(tl.Name, func(t *testing.T) {
			if len(tl.Example) == 0 {
				t.Fatal("no example")
			}
			if err := tl.ValidateInput(tl.Example); err != nil {
				t.Errorf("example %s: %v", tl.Example, err)
			}
		})
	}
}

func TestValidateInputNamesTheField(t *testing.T) {
	handOff := func(project, assignee, typ string) string {
		return `{"project":"` + project + `","assignee":"` + assignee + `","packet":{"task":"t","deliverable_type":"` + typ + `","acceptance_criteria":["c"]}}`
	}
	cases := []struct {
		name, tool, args string
		want             []string // empty: valid
	}{
		{"valid hand-off", "hand_off_task", handOff("website-v2", "bob/reviewer", "code"), nil},
		{"bad deliverable_type", "hand_off_task", handOff("website-v2", "bob/reviewer", "poem"), []string{"/packet/deliverable_type"}},
		{"project slug with --", "hand_off_task", handOff("web--v2", "bob/reviewer", "code"), []string{"/project"}},
		{"project slug ending in -", "hand_off_task", handOff("web-", "bob/reviewer", "code"), []string{"/project"}},
		{"project slug in capitals", "hand_off_task", handOff("Website", "bob/reviewer", "code"), []string{"/project"}},
		{"assignee without owner", "hand_off_task", handOff("website-v2", "reviewer", "code"), []string{"/assignee"}},
		{"assignee with -- in the agent", "hand_off_task", handOff("website-v2", "bob/re--viewer", "code"), []string{"/assignee"}},
		{"missing assignee", "hand_off_task", `{"project":"website-v2","packet":{"task":"t","deliverable_type":"code","acceptance_criteria":["c"]}}`, []string{"assignee"}},
		{"missing packet field", "hand_off_task", `{"project":"website-v2","assignee":"bob/reviewer","packet":{"task":"t","deliverable_type":"code"}}`, []string{"/packet", "acceptance_criteria"}},
		{"unknown packet field", "hand_off_task", `{"project":"website-v2","assignee":"bob/reviewer","packet":{"task":"t","deliverable_type":"code","acceptance_criteria":["c"],"budget":5}}`, []string{"/packet", "budget"}},
		{"no arguments", "get_task", ``, []string{"task_id"}},
		{"task_id with a space", "get_task", `{"task_id":"tsk 1"}`, []string{"/task_id"}},
		{"limit above the maximum", "read_room", fmt.Sprintf(`{"project":"website-v2","limit":%d}`, team.MaxTaskLimit+1), []string{"/limit"}},
		{"limit 0", "read_room", `{"project":"website-v2","limit":0}`, []string{"/limit"}},
		{"repeated states", "read_room", `{"project":"website-v2","states":["routed","routed"]}`, []string{"/states"}},
		{"unknown state", "read_room", `{"project":"website-v2","states":["done"]}`, []string{"/states/0"}},
		{"cursor with padding", "read_room", `{"project":"website-v2","cursor":"abc="}`, []string{"/cursor"}},
		{"owner_approved provenance", "return_result", `{"task_id":"t","summary":"s","evidence":[{"kind":"note","summary":"n"}],"provenance":"owner_approved"}`, []string{"/provenance"}},
		{"evidence url that is not a uri", "return_result", `{"task_id":"t","summary":"s","evidence":[{"kind":"link","summary":"n","url":"not a uri"}]}`, []string{"/evidence/0/url"}},
		{"no evidence", "return_result", `{"task_id":"t","summary":"s","evidence":[]}`, []string{"/evidence"}},
		{"step input that is not an object", "request_step", `{"tool_name":"Bash","input":"git push"}`, []string{"/input"}},
		{"step tool_name with a space", "request_step", `{"tool_name":"Ba sh","input":{}}`, []string{"/tool_name"}},
		{"checkpoint waiting on owner approval", "save_checkpoint", `{"task_id":"t","progress":"p","waiting_on":"owner_approval"}`, []string{"/waiting_on"}},
		{"unknown verdict", "review_result", `{"task_id":"t","verdict":"maybe"}`, []string{"/verdict"}},
		{"availability not in the enum", "update_pulse", `{"project":"website-v2","doing":"x","availability":"busy"}`, []string{"/availability"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl, _ := catalog.Lookup(c.tool)
			err := tl.ValidateInput(json.RawMessage(c.args))
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("valid arguments refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("%s accepted %s", c.tool, c.args)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q spans lines; an agent wants one", err)
			}
		})
	}
}

// world is a team service over the in-memory store: website-v2 with alice and bob.
type world struct {
	store *teamtest.Store
	svc   *team.Service
	now   time.Time
}

var (
	alice = identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindAgent}
	bob   = identity.Caller{Agent: "bob/reviewer", Owner: "bob", Kind: identity.KindAgent}
)

func newWorld() *world {
	w := &world{store: teamtest.New(), now: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)}
	n := 0
	w.svc = &team.Service{Store: w.store, Now: func() time.Time { return w.now }, NewID: func(p string) string {
		n++
		return p + string(rune('0'+n))
	}}
	w.store.AddProject(team.Project{Slug: "website-v2", Name: "Website v2"})
	w.store.AddAgent(team.Agent{ID: alice.Agent, Projects: []string{"website-v2"}})
	w.store.AddAgent(team.Agent{ID: bob.Agent, Projects: []string{"website-v2"}})
	return w
}

func encode(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValidateOutput(t *testing.T) {
	w := newWorld()
	ctx := context.Background()
	handed, err := w.svc.HandOffTask(ctx, alice, team.HandOffInput{Project: "website-v2", Assignee: bob.Agent,
		Packet: task.Packet{Task: "t", DeliverableType: "code", AcceptanceCriteria: []string{"c"}}})
	if err != nil {
		t.Fatal(err)
	}
	id := handed.Task.ID
	w.now = w.now.Add(1234 * time.Millisecond)
	if _, err := w.svc.AcceptTask(ctx, bob, team.AcceptInput{TaskID: id}); err != nil {
		t.Fatal(err)
	}
	checkpointed, err := w.svc.SaveCheckpoint(ctx, bob, team.CheckpointInput{TaskID: id, Progress: "p", WaitingOn: "human"})
	if err != nil {
		t.Fatal(err)
	}
	returned, err := w.svc.ReturnResult(ctx, bob, team.ReturnResultInput{TaskID: id, Summary: "s", Evidence: []task.Evidence{{Kind: "commit", Summary: "c", URL: "https://example.com/c/1"}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := w.svc.GetTask(ctx, alice, team.GetTaskInput{TaskID: id})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.UpdatePulse(ctx, bob, team.UpdatePulseInput{Project: "website-v2", Doing: "d", TaskID: id}); err != nil {
		t.Fatal(err)
	}
	room, err := w.svc.ReadRoom(ctx, alice, team.ReadRoomInput{Project: "website-v2"})
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		tool string
		out  any
	}{
		"a routed task":         {"hand_off_task", handed},
		"a waiting task":        {"save_checkpoint", checkpointed},
		"a task with a result":  {"return_result", returned},
		"a task and history":    {"get_task", got},
		"the room with a pulse": {"read_room", room},
	} {
		t.Run(name, func(t *testing.T) {
			tl, _ := catalog.Lookup(c.tool)
			if err := tl.ValidateOutput(encode(t, c.out)); err != nil {
				t.Errorf("%s output breaks its schema: %v", c.tool, err)
			}
		})
	}

	// The same task with a required field removed is refused, naming it.
	var broken map[string]map[string]any
	if err := json.Unmarshal(encode(t, returned), &broken); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"waiting_on", "latest_checkpoint", "updated_at"} {
		t.Run("task missing "+field, func(t *testing.T) {
			saved := broken["task"][field]
			delete(broken["task"], field)
			defer func() { broken["task"][field] = saved }()
			tl, _ := catalog.Lookup("return_result")
			err := tl.ValidateOutput(encode(t, broken))
			if err == nil || !strings.Contains(err.Error(), field) {
				t.Errorf("err = %v, want one naming %s", err, field)
			}
		})
	}
}

func TestRunChecksTheArguments(t *testing.T) {
	w := newWorld()
	tl, _ := catalog.Lookup("review_result")
	_, err := tl.Run(context.Background(), w.svc, bob, json.RawMessage(`{"task_id":"tsk_1","verdict":"maybe"}`))
	var invalid *catalog.InvalidArgumentsError
	if !errors.As(err, &invalid) || !strings.Contains(err.Error(), "/verdict") || !strings.Contains(err.Error(), "review_result") {
		t.Errorf("err = %v, want an InvalidArgumentsError naming review_result and /verdict", err)
	}
}

func TestRunCheckedRunsOnlyArgumentsCheckedForTheTool(t *testing.T) {
	w := newWorld()
	ctx := context.Background()
	getTask, _ := catalog.Lookup("get_task")
	accept, _ := catalog.Lookup("accept_task")
	if _, err := getTask.RunChecked(ctx, w.svc, alice, catalog.Arguments{}); err == nil {
		t.Error("RunChecked ran arguments nothing checked")
	}
	args, err := accept.Check(json.RawMessage(`{"task_id":"tsk_1"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := getTask.RunChecked(ctx, w.svc, alice, args); err == nil {
		t.Error("get_task ran arguments checked for accept_task")
	}
	if string(args.Raw()) != `{"task_id":"tsk_1"}` {
		t.Errorf("Raw = %s, want the bytes checked", args.Raw())
	}
}

// TestRequestStepRunsOnTheInputItsCheckMadeCanonical: the step stored is
// the input as its bounds check made it canonical, handed to the team
// service as checked.
func TestRequestStepRunsOnTheInputItsCheckMadeCanonical(t *testing.T) {
	w := newWorld()
	ctx := context.Background()
	handed, err := w.svc.HandOffTask(ctx, alice, team.HandOffInput{Project: "website-v2", Assignee: bob.Agent,
		Packet: task.Packet{Task: "t", DeliverableType: "code", AcceptanceCriteria: []string{"c"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.AcceptTask(ctx, bob, team.AcceptInput{TaskID: handed.Task.ID}); err != nil {
		t.Fatal(err)
	}
	run := identity.Caller{Agent: bob.Agent, Owner: "bob", Kind: identity.KindRun, TaskID: handed.Task.ID, RunID: "run_1"}
	tl, _ := catalog.Lookup("request_step")
	args, err := tl.Check(json.RawMessage(`{"tool_name":"Bash","input":{ "description":"push", "command":"git push" }}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := tl.RunChecked(ctx, w.svc, run, args)
	if err != nil {
		t.Fatal(err)
	}
	answer, ok := out.(team.RequestStepOutput)
	if !ok || answer.Status != "pending" || answer.Behavior != "deny" {
		t.Fatalf("answer = %+v, want pending deny", out)
	}
	st, err := w.store.Step(ctx, handed.Task.ID, answer.StepID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(st.Input), `{"command":"git push","description":"push"}`; got != want {
		t.Errorf("stored input = %s, want the canonical %s", got, want)
	}
}
