package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/mcp/catalog"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

// FuzzToolArguments: any bytes as the arguments of any tool, called by an
// agent or by a woken run. Checking never panics; arguments the catalog
// accepts always decode into the tool's input (the schema and the Go types
// agree), and the service then answers either a result that keeps the
// tool's own output schema or a clear refusal, never another error.
func FuzzToolArguments(f *testing.F) {
	tools := catalog.All()
	for i, t := range tools {
		f.Add(uint8(i), false, []byte(t.Example))
		f.Add(uint8(i), true, []byte(t.Example))
	}
	for _, seed := range []string{
		`{}`, `null`, `[]`, `{"task_id":"example-task-id","verdict":"accept"}`,
		`{"project":"website-v2","assignee":"alice/writer","packet":{"task":"x","deliverable_type":"answer","acceptance_criteria":["y"],"depends_on":["example-task-id"]}}`,
		`{"tool_name":"Pay","input":{"to":"x"},"kind":"spending","amount":{"value":1e308,"unit":"USD"}}`,
		`{"tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"toolu_1"}`,
		`{"project":"website-v2","doing":"d","task_id":"example-task-id","files":["a"],"branch":"b"}`,
		`{"project":"website-v2","role":"any","states":["working","waiting"],"limit":1,"cursor":"AAAA"}`,
		`{"task_id":"example-task-id","summary":"s","evidence":[{"kind":"screenshot","summary":"x","url":"https://e.example/a.png"}],"provenance":"owner_approved"}`,
	} {
		for i := range tools {
			f.Add(uint8(i), false, []byte(seed))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, asRun bool, args []byte) {
		tool := tools[int(which)%len(tools)]
		if tool.ValidateInput(args) != nil {
			return
		}
		w := fuzzWorld(t)
		caller := identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindAgent, Projects: []string{"website-v2"}, ProjectsKnown: true}
		if asRun {
			caller.Kind, caller.TaskID, caller.RunID = identity.KindRun, "example-task-id", "run_1"
		}
		out, err := tool.Run(context.Background(), w, caller, args)
		var refusal *task.Refusal
		switch {
		case errors.As(err, &refusal):
			if refusal.Msg == "" {
				t.Fatalf("%s %s: an empty refusal", tool.Name, args)
			}
		case err != nil:
			t.Fatalf("%s %s: accepted by the schema, then %v", tool.Name, args, err)
		default:
			b, merr := json.Marshal(out)
			if merr != nil {
				t.Fatalf("%s %s: result does not encode: %v", tool.Name, args, merr)
			}
			if verr := tool.ValidateOutput(b); verr != nil {
				t.Fatalf("%s %s: result %s breaks the output schema: %v", tool.Name, args, b, verr)
			}
		}
	})
}

// fuzzWorld is website-v2 with alice/writer working on example-task-id for
// bob/reviewer, over the in-memory store, with well-formed ids.
func fuzzWorld(t *testing.T) *team.Service {
	st := teamtest.New()
	st.AddProject(team.Project{Slug: "website-v2", Name: "Website v2", StepDeadline: time.Hour, OwnerApprovalTypes: []string{"doc"}})
	st.AddAgent(team.Agent{ID: "alice/writer", Owner: "alice", Projects: []string{"website-v2"}})
	st.AddAgent(team.Agent{ID: "bob/reviewer", Owner: "bob", Projects: []string{"website-v2"}})
	n := 0
	svc := &team.Service{Store: st, Now: func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) }, NewID: func(p string) string {
		n++
		if p == "tsk_" && n == 1 {
			return "example-task-id"
		}
		return fmt.Sprintf("%s%d", p, n)
	}}
	bob := identity.Caller{Agent: "bob/reviewer", Owner: "bob", Kind: identity.KindAgent}
	alice := identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindAgent}
	ctx := context.Background()
	if _, err := svc.HandOffTask(ctx, bob, team.HandOffInput{Project: "website-v2", Assignee: alice.Agent, Packet: task.Packet{
		Task: "Draft the hero headline.", DeliverableType: "answer", AcceptanceCriteria: []string{"At most 8 words."},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AcceptTask(ctx, alice, team.AcceptInput{TaskID: "example-task-id"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SaveCheckpoint(ctx, alice, team.CheckpointInput{TaskID: "example-task-id", Progress: strings.Repeat("p", 10)}); err != nil {
		t.Fatal(err)
	}
	return svc
}
