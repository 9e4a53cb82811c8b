package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/useprickle/prickle/infra/dev/toolcall"
	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/jobs/taskevents"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
	"github.com/useprickle/prickle/shared/team/mint"
)

// The project is website-v2 as infra/dev/local seeds it (two owners, three
// agents, owner approval for docs), with tasks in every state.
const project = "website-v2"

const (
	writer   = "alice/writer"
	builder  = "alice/builder"
	reviewer = "bob/reviewer"
)

// seed creates the directory and a few tasks through the admin and team
// services, as infra/dev/local/seed.go does (shortened). Nothing is recorded.
func seed(ctx context.Context, adm *admin.Admin, svc *team.Service) error {
	if err := adm.CreateProject(ctx, team.Project{Slug: project, Name: "Website v2", StepDeadline: step.DefaultPendingDeadline, OwnerApprovalTypes: []string{"doc"}}); err != nil {
		return err
	}
	for _, o := range []team.Owner{{Name: "alice", Email: "alice@example.com", SlackChannel: "#alice-agents"}, {Name: "bob", Email: "bob@example.com", SlackChannel: "#website"}} {
		if err := adm.CreateOwner(ctx, o); err != nil {
			return err
		}
	}
	for _, a := range []string{writer, builder, reviewer} {
		if err := adm.CreateAgent(ctx, a, []string{project}); err != nil {
			return err
		}
	}
	as := func(agent string) identity.Caller {
		owner, _, _ := strings.Cut(agent, "/")
		return identity.Caller{Agent: agent, Owner: owner, Kind: identity.KindAgent}
	}
	hero, err := svc.HandOffTask(ctx, as(reviewer), team.HandOffInput{Project: project, Assignee: writer, Packet: task.Packet{
		Task: "Draft the hero headline and CTA for the new landing page.", DeliverableType: "answer",
		AcceptanceCriteria: []string{"Headline of at most 8 words.", "CTA invites visitors to try the demo."},
		Context:            "Audience: engineering leads running several coding agents.", Files: []string{"site/hero.md"},
	}})
	if err != nil {
		return err
	}
	if _, err := svc.AcceptTask(ctx, as(writer), team.AcceptInput{TaskID: hero.Task.ID, Note: "On it."}); err != nil {
		return err
	}
	if _, err := svc.HandOffTask(ctx, as(builder), team.HandOffInput{Project: project, Assignee: reviewer, Packet: task.Packet{
		Task: "Review PR #42: the new pricing table.", DeliverableType: "reviewed_pr",
		AcceptanceCriteria: []string{"Every plan shows its monthly price.", "No layout shift on mobile."},
	}}); err != nil {
		return err
	}
	if _, err := svc.HandOffTask(ctx, as(reviewer), team.HandOffInput{Project: project, Assignee: builder, Packet: task.Packet{
		Task: "Build the hero section from the approved copy.", DeliverableType: "code",
		AcceptanceCriteria: []string{"Uses the headline and CTA from the hero task.", "Lighthouse accessibility score stays at 100."},
		DependsOn:          []string{hero.Task.ID},
	}}); err != nil {
		return err
	}
	branch, decision := "hero-copy", "Lead with coordination, not speed."
	for _, a := range []string{writer, reviewer} {
		if _, err := svc.UpdatePulse(ctx, as(a), team.UpdatePulseInput{Project: project, Availability: "working", Doing: "Drafting the hero copy.",
			Branch: &branch, Files: []string{"site/hero.md"}, LastDecision: &decision}); err != nil {
			return err
		}
	}
	return nil
}

// session calls tools over MCP 2026-07-28 through the in-process endpoint,
// as a client of the custom domain does (Mcp-Name routes the call straight
// to the tool's own endpoint), recording each call under the tool's name.
type session struct {
	mcp    http.Handler
	rec    *Recorder
	tokens map[string]string // agent → agent token secret
	nextID int
	// stream and filer are the tasks table's stream and the task-events
	// handler, which files the history lines a call's moves carry.
	stream *storetest.StreamReader
	filer  *taskevents.Handler
	// show, when set, is called with each tool and the task it moved, after the call.
	show func(tool, taskID string)
}

// file hands the stream records a call wrote to task-events, as Lambda
// would, and records its requests with the call's (marked as its own): a
// move's history line is filed there.
func (s *session) file() error {
	batch, err := s.stream.Next(context.Background())
	if err != nil {
		return err
	}
	s.rec.Stream(true)
	defer s.rec.Stream(false)
	return s.filer.Handle(context.Background(), batch)
}

// call makes one recorded tool call as token's holder and returns its
// structuredContent, or the JSON of its one text block when it carries none
// (request_step answering a run token).
func (s *session) call(token, tool string, args any) (json.RawMessage, error) {
	// The lines of the scenario's unrecorded moves are filed first, unrecorded.
	if err := s.file(); err != nil {
		return nil, fmt.Errorf("before %s: the tasks stream: %w", tool, err)
	}
	s.rec.Label(tool)
	defer s.rec.Label("")
	s.nextID++
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]string{"name": "prickle-capacity", "version": "0"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.nextID, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args, "_meta": meta}})
	if err != nil {
		return nil, err
	}
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(string(body)))
	toolcall.SetHeaders(req, token, tool)
	w := httptest.NewRecorder()
	s.mcp.ServeHTTP(w, req)
	if err := s.file(); err != nil {
		return nil, fmt.Errorf("%s: the tasks stream: %w", tool, err)
	}
	resp, err := toolcall.Parse(w.Body.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s: HTTP %d %s", tool, w.Code, w.Body.String())
	}
	switch {
	case resp.Error != nil:
		return nil, fmt.Errorf("%s: %s", tool, resp.Error.Message)
	case resp.Result == nil:
		return nil, fmt.Errorf("%s: no result: %s", tool, w.Body.String())
	case resp.Result.IsError:
		return nil, fmt.Errorf("%s refused: %+v", tool, resp.Result.Content)
	}
	if len(resp.Result.StructuredContent) == 0 && len(resp.Result.Content) == 1 {
		return json.RawMessage(resp.Result.Content[0].Text), nil
	}
	return resp.Result.StructuredContent, nil
}

// handOff creates a task for assignee (a recorded hand_off_task) and returns its id.
func (s *session) handOff(requester, assignee, text string) (string, error) {
	out, err := s.call(s.tokens[requester], "hand_off_task", map[string]any{"project": project, "assignee": assignee, "packet": map[string]any{
		"task": text, "deliverable_type": "answer",
		"acceptance_criteria": []string{"Headline of at most 8 words.", "CTA invites visitors to try the demo."},
		"context":             "Audience: engineering leads running several coding agents.", "files": []string{"site/hero.md"},
	}})
	if err != nil {
		return "", err
	}
	var r struct {
		Task task.Task `json:"task"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return "", err
	}
	return r.Task.ID, nil
}

// round is one realistic pass over all eleven tools: a task handed off,
// accepted, checkpointed, a step asked (and approved by the owner, off the
// record), the result returned and accepted, the task and room read, the
// pulse updated; plus a task declined and one cancelled.
func (s *session) round(ctx context.Context, adm *admin.Admin, i int) error {
	w, rv := s.tokens[writer], s.tokens[reviewer]
	id, err := s.handOff(reviewer, writer, fmt.Sprintf("Draft hero variant %d for the landing page A/B test.", i))
	if err != nil {
		return err
	}
	steps := []struct {
		token, tool string
		args        map[string]any
	}{
		{w, "accept_task", map[string]any{"task_id": id, "note": "On it."}},
		{w, "save_checkpoint", map[string]any{"task_id": id, "progress": "Drafted two headline options.",
			"decisions": []string{"Lead with coordination, not speed."}, "files_touched": []string{"site/hero.md"},
			"next_steps": []string{"Pick one headline and write the CTA."}}},
	}
	for _, st := range steps {
		if _, err := s.call(st.token, st.tool, st.args); err != nil {
			return err
		}
	}

	run, err := adm.StartRun(ctx, mint.ByOperator, writer, id, "")
	if err != nil {
		return err
	}
	out, err := s.call(run.RunToken, "request_step", map[string]any{"tool_name": "Bash", "input": map[string]any{"command": "git push origin main"},
		"kind": "outbound", "target": "origin", "reason": "Publish the reviewed branch."})
	if err != nil {
		return err
	}
	var asked team.RequestStepOutput
	if err := json.Unmarshal(out, &asked); err != nil {
		return err
	}
	if _, err := adm.DecideStep(ctx, "alice", id, asked.StepID, true, ""); err != nil {
		return err
	}

	steps = []struct {
		token, tool string
		args        map[string]any
	}{
		{w, "return_result", map[string]any{"task_id": id, "summary": "Drafted the hero headline and CTA.",
			"evidence":   []map[string]string{{"kind": "note", "summary": "Headline has 6 words; CTA asks to try the demo."}},
			"provenance": "agent_generated"}},
		{rv, "review_result", map[string]any{"task_id": id, "verdict": "accept"}},
		{w, "get_task", map[string]any{"task_id": id}},
		{w, "read_room", map[string]any{"project": project}},
		{w, "update_pulse", map[string]any{"project": project, "availability": "working", "doing": "Drafting the hero copy.",
			"task_id": id, "branch": "hero-copy", "files": []string{"site/hero.md"}, "last_decision": "Lead with coordination, not speed."}},
	}
	for _, st := range steps {
		if _, err := s.call(st.token, st.tool, st.args); err != nil {
			return err
		}
		if s.show != nil && i == 1 {
			s.show(st.tool, id)
		}
	}

	declined, err := s.handOff(reviewer, writer, fmt.Sprintf("Translate hero variant %d.", i))
	if err != nil {
		return err
	}
	if _, err := s.call(w, "decline_task", map[string]any{"task_id": declined, "reason": "Not my area: ask a translator."}); err != nil {
		return err
	}
	cancelled, err := s.handOff(reviewer, writer, fmt.Sprintf("Shorten hero variant %d.", i))
	if err != nil {
		return err
	}
	_, err = s.call(rv, "cancel_task", map[string]any{"task_id": cancelled, "reason": "Variant dropped from the test."})
	return err
}
