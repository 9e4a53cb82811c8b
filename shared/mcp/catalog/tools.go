package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/useprickle/prickle/shared/domain/step"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/team"
)

// Tool is one entry of the catalog: what tools/list shows and what a call runs.
type Tool struct {
	Name        string
	Title       string
	Description string
	// Writes says whether the tool changes project data (readOnlyHint is its negation).
	Writes      bool
	Destructive bool
	Idempotent  bool
	Input       json.RawMessage
	Output      json.RawMessage
	// Example is an input the server accepts against the seeded website-v2 project.
	Example json.RawMessage
	run     func(ctx context.Context, svc *team.Service, c identity.Caller, args Arguments) (any, error)

	compileOnce sync.Once
	inSchema    *jsonschema.Schema
	outSchema   *jsonschema.Schema
	compileErr  error
}

// bind adapts a typed service method to the catalog's untyped call.
func bind[In, Out any](method func(*team.Service, context.Context, identity.Caller, In) (Out, error)) func(context.Context, *team.Service, identity.Caller, Arguments) (any, error) {
	return func(ctx context.Context, svc *team.Service, c identity.Caller, args Arguments) (any, error) {
		var in In
		if err := decode(args.raw, &in); err != nil {
			return nil, err
		}
		return method(svc, ctx, c, in)
	}
}

// requestStep runs request_step on the input its bounds check made
// canonical, which the team service takes as checked and does not check again.
func requestStep(ctx context.Context, svc *team.Service, c identity.Caller, args Arguments) (any, error) {
	var in team.RequestStepInput
	if err := decode(args.raw, &in); err != nil {
		return nil, err
	}
	return svc.RequestCheckedStep(ctx, c, in, args.stepInput)
}

func decode(args json.RawMessage, in any) error {
	if len(args) == 0 || string(args) == "null" {
		return nil
	}
	if err := json.Unmarshal(args, in); err != nil {
		return fmt.Errorf("decode arguments: %w", err)
	}
	return nil
}

const taskMoves = " Returns the task as it now stands; a wrong caller or state is refused with the task's state and what would be accepted, and nothing is written."

var tools = []*Tool{
	{Name: "read_room", Title: "Read the room",
		Description: "See the room before you act: Team Pulse of a project (who is doing what, on which task, branch and files) plus the tasks that involve you, newest first. Filter by your role (assignee, requester or any) and by states; page with limit and the next_cursor it returns.",
		Idempotent:  true, run: bind((*team.Service).ReadRoom)},
	{Name: "get_task", Title: "Get a task",
		Description: "One task of your project (the packet, state, what it waits on, latest checkpoint, result with evidence) plus its history: who moved it, when, from which state to which, with notes and review feedback.",
		Idempotent:  true, run: bind((*team.Service).GetTask)},
	{Name: "hand_off_task", Title: "Hand off a task", Writes: true,
		Description: "Hand a task to a teammate agent (owner/agent, another agent than you: no agent reviews its own result) of the project, with a packet: what to do, the deliverable type, acceptance criteria, and optionally context, files and the tasks it depends on. You are the requester. The task is routed to the assignee at once, or stays requested until every task in depends_on is completed.",
		run:         bind((*team.Service).HandOffTask)},
	{Name: "accept_task", Title: "Accept a task", Writes: true,
		Description: "Take a task routed to you (routed → accepted), optionally with a note to the requester. Only the assignee may." + taskMoves,
		run:         bind((*team.Service).AcceptTask)},
	{Name: "decline_task", Title: "Decline a task", Writes: true, Destructive: true,
		Description: "Turn down a task routed to you or accepted by you (→ rejected), saying why. Only the assignee may." + taskMoves,
		run:         bind((*team.Service).DeclineTask)},
	{Name: "save_checkpoint", Title: "Save a checkpoint", Writes: true,
		Description: "Record your progress on a task you accepted: progress, decisions, files touched, next steps, open questions. The task moves to working, or to waiting when you set waiting_on (human or agent). A checkpoint lets the next run pick up where this one stopped." + taskMoves,
		run:         bind((*team.Service).SaveCheckpoint)},
	{Name: "request_step", Title: "Ask your owner before a step", Writes: true,
		Description: "A woken run only: before a step your run's tools don't allow (destructive, spending or outbound), ask your owner with the exact call you will make (tool_name and input), and say what it is (kind, target, amount, reason). Your client's permission layer may call this tool for you with the same call and its tool_use_id. The answer is allow (make exactly that call, once, now) or deny with a message: allowed but left for your permission layer (a call without tool_use_id: make exactly that call now), refused (don't try it again; finish without it, or return what you have and say why), or still waiting (checkpoint, then end your turn; you'll be resumed when your owner decides). An allowed step must be used within " + useWindow + ", by this task's run or the run that resumes it, and only with the same input: any other call is a new step. One step waits at a time.",
		run:         requestStep},
	{Name: "return_result", Title: "Return a result", Writes: true,
		Description: "Return the result of a task to whoever asked. Evidence is required and should match the deliverable type: test output, screenshots, source links or a pull request.\n\nEvidence is required. Each evidence item needs a URL or content unless its kind is note. Only a human approval can produce owner_approved provenance.",
		run:         bind((*team.Service).ReturnResult)},
	{Name: "review_result", Title: "Review a result", Writes: true, Destructive: true,
		Description: "As the requester, judge a returned result: accept completes the task (or sends it to owner approval when the project requires it for this deliverable type), rework sends it back to the assignee with your feedback, reject ends it. Feedback is required unless you accept." + taskMoves,
		run:         bind((*team.Service).ReviewResult)},
	{Name: "cancel_task", Title: "Cancel a task", Writes: true, Destructive: true,
		Description: "As the requester, cancel a task that is still open (any state but completed, rejected or cancelled), saying why." + taskMoves,
		run:         bind((*team.Service).CancelTask)},
	{Name: "update_pulse", Title: "Update your pulse", Writes: true, Idempotent: true,
		Description: "Report what you are working on right now (task, branch, files, last decision) so your teammates' agents and people can see it on Team Pulse.",
		run:         bind((*team.Service).UpdatePulse)},
}

var byName = map[string]*Tool{}

func init() {
	for _, t := range tools {
		t.Input = schemaFile(t.Name, "input")
		t.Output = schemaFile(t.Name, "output")
		t.Example = schemaFile(t.Name, "example")
		byName[t.Name] = t
	}
}

// All returns the catalog in its published order.
func All() []*Tool { return tools }

// Lookup finds a tool by name.
func Lookup(name string) (*Tool, bool) {
	t, ok := byName[name]
	return t, ok
}

func (t *Tool) compile() error {
	t.compileOnce.Do(func() {
		if t.inSchema, t.compileErr = compile(t.Name+".input", t.Input); t.compileErr != nil {
			return
		}
		t.outSchema, t.compileErr = compile(t.Name+".output", t.Output)
	})
	return t.compileErr
}

// Arguments are a call's arguments that passed their tool's input check
// (Check): the bytes as sent and, for request_step, the step's input as
// canonical JSON. Only Check makes them, so whoever holds them runs the tool
// (RunChecked) without checking anything again.
type Arguments struct {
	tool      string
	raw       json.RawMessage
	stepInput []byte
}

// Raw is the arguments' bytes as they were checked.
func (a Arguments) Raw() json.RawMessage { return a.raw }

// Check checks call arguments against the tool's bounds and input schema,
// naming the offending field.
func (t *Tool) Check(args json.RawMessage) (Arguments, error) {
	if err := t.compile(); err != nil {
		return Arguments{}, err
	}
	doc := args
	if len(doc) == 0 || string(doc) == "null" {
		doc = json.RawMessage(`{}`)
	}
	stepInput, err := checkBounds(t.Name, doc)
	if err != nil {
		return Arguments{}, err
	}
	if err := validate(t.inSchema, doc); err != nil {
		return Arguments{}, err
	}
	return Arguments{tool: t.Name, raw: args, stepInput: stepInput}, nil
}

// ValidateInput is Check for callers that only need its verdict (the tests,
// the tool reference's examples).
func (t *Tool) ValidateInput(args json.RawMessage) error {
	_, err := t.Check(args)
	return err
}

// ValidateOutput checks a result against the output schema: the tests
// hold every tool's results to it (the unit tests here, the e2e clients
// with their own validators). The server does not check each answer again:
// that was about 40 % of a call's allocations.
func (t *Tool) ValidateOutput(out json.RawMessage) error {
	if err := t.compile(); err != nil {
		return err
	}
	return validate(t.outSchema, out)
}

// Run checks the arguments and carries out the tool for the caller.
func (t *Tool) Run(ctx context.Context, svc *team.Service, c identity.Caller, args json.RawMessage) (any, error) {
	checked, err := t.Check(args)
	if err != nil {
		return nil, &InvalidArgumentsError{Tool: t.Name, Err: err}
	}
	return t.run(ctx, svc, c, checked)
}

// RunChecked carries out the tool for arguments Check accepted: the MCP
// edge checks every call before mcp-go reads it and hands the result here,
// so each call's arguments are checked once.
func (t *Tool) RunChecked(ctx context.Context, svc *team.Service, c identity.Caller, args Arguments) (any, error) {
	if args.tool != t.Name {
		return nil, fmt.Errorf("%s: arguments not checked for it (checked for %q)", t.Name, args.tool)
	}
	return t.run(ctx, svc, c, args)
}

// InvalidArgumentsError says a call's arguments break the tool's input schema.
type InvalidArgumentsError struct {
	Tool string
	Err  error
}

func (e *InvalidArgumentsError) Error() string {
	return fmt.Sprintf("invalid arguments for %s: %v", e.Tool, e.Err)
}

func (e *InvalidArgumentsError) Unwrap() error { return e.Err }

// useWindow is how long an approved step may be used, as the description says it.
var useWindow = fmt.Sprintf("%d minutes", int(step.UseWindow.Minutes()))
