package web

import (
	"net/url"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/owners/notify"
)

// page is what the approval pages show; render makes it bare and fills in its Root.
type page struct {
	chrome
	Heading string
	// Notice is the outcome of this request (decided, refused by the rules, an error).
	Notice      string
	NoticeClass string // ok, warn or error
	// Decided says who decided and when, once the step or result is no longer open.
	Decided   string
	Step      *stepView
	Result    *resultView
	CanDecide bool
	FormToken string
	Until     string
	// Grant is what the form offers besides "approve once", for a step.
	Grant grantChoice
	// WhoDecides states the rule of who may decide with this link.
	WhoDecides string
	// SignInAs, on a shared link nobody signed in to, is the owner to sign
	// in as before deciding; Next is the page to come back to.
	SignInAs, Next string
	// EditSignInAs, on a link that decides by itself with nobody signed in,
	// is the owner to sign in as before editing the call (Next comes back):
	// the page then offers approving as asked, not the edit.
	EditSignInAs string
}

// Choice feeds the grant-choice and edit-call templates of the decide form.
func (p page) Choice() pendingStep {
	return pendingStep{stepView: p.Step, ID: "step", Grant: p.Grant}
}

type stepView struct {
	ToolName, Input, Kind, Target, Amount, Reason, Agent, TaskID, Project, Status, Asked, Expires string
	// Does says what the call does, from the input of a well-known tool; empty otherwise.
	Does string
	// Edited is the call as the owner edited it before approving it; empty when approved as asked.
	Edited string
	// Edit is the call as its edit form holds it.
	Edit editView
}

type resultView struct {
	TaskID, Project, Work, Type, Assignee, Requester, State, Summary, Provenance, ReturnedBy, ReturnedAt string
	Evidence                                                                                             []evidenceView
}

// evidenceView is one piece of evidence, on the approval page and the task page.
type evidenceView struct {
	Kind, Summary, Content string
	URL                    string // only http(s) URLs become links
	// The task page's: Image shows a screenshot inline (its host is
	// allowed); ImageHost, for a screenshot on any other https host, offers
	// it as a link only; Collapsible folds long test output.
	Image, Collapsible bool
	ImageHost          string
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func viewStep(s step.Step) *stepView {
	input := notify.PrettyInput(s.Input, notify.InputPageMax)
	v := &stepView{
		ToolName: s.ToolName, Does: step.Summary(s.ToolName, s.Input), Input: input, Kind: orDash(s.Kind), Target: orDash(s.Target),
		Amount: orDash(notify.FormatAmount(s.Amount)), Reason: orDash(s.Reason), Agent: s.Agent,
		TaskID: s.TaskID, Project: s.Project, Status: string(s.Status), Asked: stamp(s.CreatedAt), Expires: stamp(s.ExpiresAt),
		Edit: editOf(s, input),
	}
	if len(s.Edited) > 0 {
		v.Edited = notify.PrettyInput(s.Edited, notify.InputPageMax)
	}
	return v
}

func viewResult(t task.Task) *resultView {
	v := &resultView{
		TaskID: t.ID, Project: t.Project, Work: t.Packet.Task, Type: t.Packet.DeliverableType,
		Assignee: t.Assignee, Requester: t.Requester, State: string(t.State),
	}
	if r := t.Result; r != nil {
		v.Summary, v.Provenance, v.ReturnedBy = r.Summary, r.Provenance, r.ReturnedBy
		if !r.ReturnedAt.IsZero() {
			v.ReturnedAt = stamp(r.ReturnedAt)
		}
		for _, e := range r.Evidence {
			ev := evidenceView{Kind: e.Kind, Summary: e.Summary, Content: e.Content}
			if u, err := url.Parse(e.URL); err == nil && (u.Scheme == "https" || u.Scheme == "http") {
				ev.URL = e.URL
			} else if e.URL != "" {
				ev.Content = strings.TrimSpace(e.URL + "\n" + e.Content)
			}
			v.Evidence = append(v.Evidence, ev)
		}
	}
	return v
}
