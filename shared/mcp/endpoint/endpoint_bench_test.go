//go:build integration

package endpoint_test

import (
	"context"
	"fmt"
	"github.com/useprickle/prickle/shared/domain/task"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/mcp/endpoint"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
	"github.com/useprickle/prickle/shared/team/mint"
)

// BenchmarkToolCall times one MCP 2026-07-28 tools/call through the whole
// endpoint (endpoint.InProcess: bearer token lookup, argument validation,
// routing by Mcp-Name, the tool, structuredContent) against fresh tables
// on the DynamoDB emulator. Every DynamoDB request is an HTTP round trip to
// the single-threaded emulator, so ns/op is dominated by it; B/op and
// allocs/op are the endpoint's own (the SDK's included).
//
//	infra/dev/emulator/with-emulator.sh go test -tags integration -run '^$' -bench . -benchmem -benchtime 50x ./shared/mcp/endpoint/
func BenchmarkToolCall(b *testing.B) {
	ctx := context.Background()
	fx := storetest.New(b)
	adm, svc := admin.New(fx.Store), team.New(fx.Store)
	const project, writer, reviewer = "website-v2", "alice/writer", "bob/reviewer"
	if err := adm.CreateProject(ctx, team.Project{Slug: project, Name: "Website v2", StepDeadline: step.DefaultPendingDeadline, OwnerApprovalTypes: []string{"doc"}}); err != nil {
		b.Fatal(err)
	}
	for _, o := range []string{"alice", "bob"} {
		if err := adm.CreateOwner(ctx, team.Owner{Name: o, Email: o + "@example.com"}); err != nil {
			b.Fatal(err)
		}
	}
	tokens := map[string]string{}
	for _, a := range []string{writer, reviewer} {
		if err := adm.CreateAgent(ctx, a, []string{project}); err != nil {
			b.Fatal(err)
		}
		secret, err := adm.MintAgentToken(ctx, a)
		if err != nil {
			b.Fatal(err)
		}
		tokens[a] = secret
	}
	h, err := endpoint.InProcess(endpoint.Config{Service: svc, Tokens: fx.Store, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}

	caller := func(agent string) identity.Caller {
		owner, _, _ := strings.Cut(agent, "/")
		return identity.Caller{Agent: agent, Owner: owner, Kind: identity.KindAgent}
	}
	// newTask hands off a task to the writer (through the service, untimed), accepted if asked.
	newTask := func(b *testing.B, accept bool) string {
		out, err := svc.HandOffTask(ctx, caller(reviewer), team.HandOffInput{Project: project, Assignee: writer, Packet: task.Packet{
			Task: "Draft the hero headline and CTA for the new landing page.", DeliverableType: "answer",
			AcceptanceCriteria: []string{"Headline of at most 8 words.", "CTA invites visitors to try the demo."},
		}})
		if err != nil {
			b.Fatal(err)
		}
		if accept {
			if _, err := svc.AcceptTask(ctx, caller(writer), team.AcceptInput{TaskID: out.Task.ID}); err != nil {
				b.Fatal(err)
			}
		}
		return out.Task.ID
	}
	working := newTask(b, true)
	if _, err := svc.UpdatePulse(ctx, caller(reviewer), team.UpdatePulseInput{Project: project, Doing: "Reviewing."}); err != nil {
		b.Fatal(err)
	}
	for range 10 { // a room with some history
		newTask(b, false)
	}

	b.Run("get_task", func(b *testing.B) {
		benchCall(b, h, tokens[writer], "get_task", fmt.Sprintf(`{"task_id":%q}`, working), nil)
	})
	b.Run("read_room", func(b *testing.B) {
		benchCall(b, h, tokens[writer], "read_room", `{"project":"website-v2"}`, nil)
	})
	b.Run("update_pulse", func(b *testing.B) {
		benchCall(b, h, tokens[writer], "update_pulse", fmt.Sprintf(`{"project":"website-v2","doing":"Drafting the hero copy.","task_id":%q,"files":["site/hero.md"]}`, working), nil)
	})
	b.Run("hand_off_task", func(b *testing.B) {
		benchCall(b, h, tokens[reviewer], "hand_off_task", `{"project":"website-v2","assignee":"alice/writer","packet":{"task":"Fact-check the About page.","deliverable_type":"answer","acceptance_criteria":["Every claim has a source or is flagged."]}}`, nil)
	})
	b.Run("decline_task", func(b *testing.B) {
		benchCall(b, h, tokens[writer], "decline_task", "", func(b *testing.B) (string, string) {
			return tokens[writer], fmt.Sprintf(`{"task_id":%q,"reason":"Not my area."}`, newTask(b, false))
		})
	})
	b.Run("request_step", func(b *testing.B) {
		benchCall(b, h, "", "request_step", "", func(b *testing.B) (string, string) {
			id := newTask(b, true)
			run, err := adm.StartRun(ctx, mint.ByOperator, writer, id, "")
			if err != nil {
				b.Fatal(err)
			}
			return run.RunToken, `{"tool_name":"Bash","input":{"command":"git push origin main"},"kind":"outbound","target":"origin","reason":"Publish the reviewed branch."}`
		})
	})
}
