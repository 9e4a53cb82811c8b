// Package audit is the trail an owner shows afterwards to say who allowed
// what: every step asked, decided (by whom, and how: approval link, task
// page, Slack, a standing grant, a budget; as asked or as the owner edited
// it), used, expired or withdrawn;
// every result decision; every grant and budget change; every token minted
// or revoked; every run's model spend and every model-spend cap decision. Entries are appended, never updated: the store writes each one
// once, with a condition that it is new, and no tool edits or deletes them.
// It is pure: no AWS, no MCP.
package audit

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
)

// Ways a decision reaches Prickle, as Entry.Via records them.
const (
	ViaLink = "approval link"
	ViaPage = "task page"
	// ViaBoard is the project board, where an owner creates a task.
	ViaBoard  = "project board"
	ViaOwners = "owners page"
	ViaSlack  = "slack"
	ViaAdmin  = "admin cli"
	ViaMCP    = "mcp"
	ViaSystem = "system"
	// ViaWebhook is a run token the wakeup function minted for a wake-up it
	// delivered to the agent's webhook; one minted at a runner's claim of a
	// pull wake-up is via ViaWakeup(its id).
	ViaWebhook = "wake-up webhook"
	// ViaRunner is a runner's report: its run ended, with what it spent.
	ViaRunner = "prickle-runner"
	// ViaRunnerLogin is an agent token an owner gave a runner by signing in
	// (prickle-runner login, the device authorization grant).
	ViaRunnerLogin = "runner login"
)

// ViaWakeup is how a run token minted at the claim of a pull wake-up came: "wake-up wk_…".
func ViaWakeup(id string) string { return "wake-up " + id }

// SignedIn is the Via of what an owner did with a signed-in session: where,
// then how the session was signed in, e.g. "task page (signed in by email link)".
func SignedIn(via, how string) string { return via + " (signed in by " + how + ")" }

// Actions of the entries the audit log itself holds (task moves come from
// the task history under their own names: hand_off, accept, review, …).
const (
	StepAsked      = "step_asked"
	StepApproved   = "step_approved"
	StepRefused    = "step_refused"
	StepAllowed    = "step_allowed"
	StepUsed       = "step_used"
	StepExpired    = "step_expired"
	StepWithdrawn  = "step_withdrawn"
	ResultApproved = "result_approved"
	ResultRefused  = "result_refused"
	GrantCreated   = "grant_created"
	GrantRevoked   = "grant_revoked"
	BudgetSet      = "budget_set"
	TokenMinted    = "token_minted"
	TokensRevoked  = "tokens_revoked"
	TokenRevoked   = "token_revoked"
	// RunSpend is one run's model spend as its runner reported it; the
	// ModelCap actions are an owner's daily model-spend cap set, raised for
	// a day or left as it is.
	RunSpend       = "run_spend"
	ModelCapSet    = "model_cap_set"
	ModelCapRaised = "model_cap_raised"
	ModelCapLeft   = "model_cap_left"
)

// MaxDetail bounds an entry's detail, in characters.
const MaxDetail = 1000

// Entry is one line of the trail.
type Entry struct {
	At      time.Time `json:"at"`
	Project string    `json:"project"`
	Action  string    `json:"action"`
	// Actor is who did it: an agent (owner/agent), "owner:<name>",
	// "operator" (the admin CLI), "system" for expiry, or "prickle"
	// (task.System) for its own moves and the run tokens of wake-ups.
	Actor string `json:"actor"`
	// Via is how: an approval link, the task page, Slack, the admin CLI, a
	// grant ("grant grt_…"), a budget ("budget USD"), MCP, a wake-up
	// (ViaWebhook, or "wake-up wk_…" when claimed), or the system.
	Via     string `json:"via"`
	TaskID  string `json:"task_id,omitempty"`
	StepID  string `json:"step_id,omitempty"`
	GrantID string `json:"grant_id,omitempty"`
	Tool    string `json:"tool,omitempty"`
	Detail  string `json:"detail,omitempty"`
	// Key orders entries of the same millisecond and makes each one unique.
	Key string `json:"-"`
}

// ForStep is the entry of one step write: prev is the status it had before
// ("" for a new step), s the step as written at at.
func ForStep(s step.Step, prev step.Status, at time.Time) Entry {
	e := Entry{At: at, Project: s.Project, TaskID: s.TaskID, StepID: s.ID, Tool: s.ToolName, Key: s.ID + "#" + string(s.Status)}
	call := fmt.Sprintf("%s %s", s.ToolName, clip(string(s.Input), 300))
	if a := s.Amount; a != nil {
		call += fmt.Sprintf(" (%s %v %s)", s.Kind, a.Value, a.Unit)
	} else if s.Kind != "" {
		call += " (" + s.Kind + ")"
	}
	owner := func() { e.Actor, e.Via = "owner:"+s.DecidedBy, cmp.Or(s.DecidedVia, ViaLink) }
	switch {
	case s.AllowedBy != "" && (prev == "" || prev == step.Pending):
		e.Action, e.Actor, e.Via, e.GrantID = StepAllowed, "owner:"+s.DecidedBy, s.AllowedBy, grantOf(s.AllowedBy)
		e.Detail = call
		if s.Status == step.Consumed {
			e.Detail += "; used at once"
		}
	case s.Status == step.Pending:
		e.Action, e.Actor, e.Via, e.Detail = StepAsked, s.Agent, ViaMCP, call
		if s.Reason != "" {
			e.Detail += "; reason: " + s.Reason
		}
		if s.BudgetNote != "" {
			e.Detail += "; " + s.BudgetNote
		}
	case s.Status == step.Approved:
		owner()
		e.Action, e.Detail = StepApproved, call+edited(s, "edited by the owner to")
	case s.Status == step.Refused:
		owner()
		e.Action, e.Detail = StepRefused, call
		if s.Message != "" {
			e.Detail += fmt.Sprintf("; message: %q", s.Message)
		}
	case s.Status == step.Consumed:
		e.Action, e.Actor, e.Via, e.Detail = StepUsed, s.Agent, ViaMCP, call+edited(s, "used as the owner edited it")
		e.GrantID = grantOf(s.AllowedBy)
	case s.Status == step.Expired:
		// Dated at the deadline, so that every path that notices the expiry writes the same entry.
		e.Action, e.Actor, e.Via, e.Detail = StepExpired, "system", ViaSystem, call
		if !s.ExpiresAt.IsZero() {
			e.At = s.ExpiresAt
		}
	case s.Status == step.Withdrawn:
		e.Action, e.Actor, e.Via, e.Detail = StepWithdrawn, s.Agent, ViaMCP, call
	default:
		e.Action, e.Actor, e.Via, e.Detail = "step_"+string(s.Status), "system", ViaSystem, call
	}
	e.Detail = clip(e.Detail, MaxDetail)
	return e
}

// edited is what an entry adds of the owner's edit of the call: the edited
// input after label, or nothing for a call approved as asked.
func edited(s step.Step, label string) string {
	if len(s.Edited) == 0 {
		return ""
	}
	return fmt.Sprintf("; %s: %s %s", label, s.ToolName, clip(string(s.Edited), 300))
}

// grantOf is the grant id of an AllowedBy such as "grant grt_…", else "".
func grantOf(allowedBy string) string {
	if id, ok := strings.CutPrefix(allowedBy, "grant "); ok {
		return id
	}
	return ""
}

// FromHistory turns a task history line into an audit entry, so the export
// shows moves (hand-offs, reviews, cancels) among the decisions.
func FromHistory(project, taskID string, h task.Event) Entry {
	detail := string(h.To)
	if h.From != nil {
		detail = string(*h.From) + " → " + string(h.To)
	}
	if h.Note != nil && *h.Note != "" {
		detail += ": " + *h.Note
	}
	via := ViaMCP
	if strings.HasPrefix(h.By, "owner:") || h.By == task.System {
		via = ViaSystem
		if strings.HasPrefix(h.By, "owner:") {
			via = "owner"
		}
	}
	return Entry{At: h.At, Project: project, Action: h.Action, Actor: h.By, Via: via, TaskID: taskID,
		Detail: clip(detail, MaxDetail), Key: fmt.Sprintf("%s#h%06d", taskID, h.Seq)}
}

// Sort orders entries by time, then by key, so an export reads as it happened.
func Sort(entries []Entry) {
	slices.SortStableFunc(entries, func(a, b Entry) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.Key, b.Key))
	})
}

// Columns are the CSV header, in order.
var Columns = []string{"at", "project", "action", "actor", "via", "task_id", "step_id", "grant_id", "tool", "detail"}

// WriteCSV writes the entries with a header line; cells that a spreadsheet
// would run as a formula are prefixed with a quote.
func WriteCSV(w io.Writer, entries []Entry) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Columns); err != nil {
		return fmt.Errorf("audit csv: %w", err)
	}
	for _, e := range entries {
		row := []string{e.At.UTC().Format("2006-01-02T15:04:05.000Z"), e.Project, e.Action, e.Actor, e.Via, e.TaskID, e.StepID, e.GrantID, e.Tool, e.Detail}
		for i, cell := range row {
			row[i] = defuse(cell)
		}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("audit csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("audit csv: %w", err)
	}
	return nil
}

// WriteJSON writes the entries as one JSON array.
func WriteJSON(w io.Writer, entries []Entry) error {
	if entries == nil {
		entries = []Entry{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(entries); err != nil {
		return fmt.Errorf("audit json: %w", err)
	}
	return nil
}

// defuse keeps an agent's text from becoming a formula when the owner opens
// the CSV in a spreadsheet (CSV injection).
func defuse(cell string) string {
	if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
		return "'" + cell
	}
	return cell
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
