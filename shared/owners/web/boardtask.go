package web

import (
	"cmp"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// maxNewTaskForm bounds the board's new-task form: a packet at
// hand_off_task's bounds (about 35,000 characters, up to 4 bytes each,
// percent-encoded) fits.
const maxNewTaskForm = 512 << 10

// createTask is POST /p/{project}/tasks: the signed-in owner hands a task to
// an agent of the project, its requester one of the owner's own agents.
// The packet is checked against hand_off_task's input schema (the same
// bounds and messages an agent gets) and created by the team service's
// hand-off, which keeps its rules; the history and the audit say the owner
// did it on the board. Then 303 to the new task's page.
func (h *Handler) createTask(w http.ResponseWriter, r *http.Request) {
	me, p, agents, ok := h.projectPage(w, r)
	if !ok {
		return
	}
	if !h.ownerForm(w, r, me, boardTaskForm) {
		return
	}
	f := r.PostForm
	in, why, err := toolInput[team.HandOffInput]("hand_off_task", handOffArgs(p.Slug, f))
	if err != nil || h.cfg.Service == nil {
		h.failed(w, r, cmp.Or(err, errNoService))
		return
	}
	if why != "" {
		infoOf(r).outcome = "invalid"
		h.boardRefused(w, r, me, p, agents, http.StatusBadRequest, why)
		return
	}
	out, err := h.cfg.Service.HandOffOnBoard(r.Context(), me.Owner, strings.TrimSpace(f.Get("requester")), decidedVia(audit.ViaBoard, me), in)
	var refusal *task.Refusal
	if errors.As(err, &refusal) {
		infoOf(r).outcome = "refused_by_rules"
		h.boardRefused(w, r, me, p, agents, http.StatusConflict, refusal.Msg)
		return
	}
	if err != nil {
		h.failed(w, r, err)
		return
	}
	infoOf(r).outcome, infoOf(r).task = "created", out.Task.ID
	w.Header().Set("Location", "../../t/"+url.PathEscape(out.Task.ID)+"?decided=created")
	w.WriteHeader(http.StatusSeeOther)
}

// handOffArgs are hand_off_task's arguments from the form: list fields one
// item a line, blank lines dropped; optional fields left out when empty.
func handOffArgs(project string, f url.Values) map[string]any {
	packet := map[string]any{
		"task":                strings.TrimSpace(f.Get("task")),
		"deliverable_type":    f.Get("deliverable_type"),
		"acceptance_criteria": lines(f.Get("acceptance_criteria")),
	}
	if c := strings.TrimSpace(normalNewlines(f.Get("context"))); c != "" {
		packet["context"] = c
	}
	if l := lines(f.Get("files")); len(l) > 0 {
		packet["files"] = l
	}
	if l := lines(f.Get("depends_on")); len(l) > 0 {
		packet["depends_on"] = l
	}
	return map[string]any{"project": project, "assignee": strings.TrimSpace(f.Get("assignee")), "packet": packet}
}

// lines is a textarea's non-blank lines, trimmed.
func lines(s string) []string {
	out := []string{}
	for _, l := range strings.Split(normalNewlines(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// normalNewlines turns a browser's CRLF line endings into LF.
func normalNewlines(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// boardRefused shows the board again with why nothing was created, and the
// form open with what the owner sent.
func (h *Handler) boardRefused(w http.ResponseWriter, r *http.Request, me session.Session, p team.Project, agents []team.Agent, status int, why string) {
	v, err := h.boardViewOf(r, me, p, agents)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	f := r.PostForm
	v.New.Requester, v.New.Assignee, v.New.Task, v.New.Type = f.Get("requester"), f.Get("assignee"), f.Get("task"), f.Get("deliverable_type")
	v.New.Criteria, v.New.Context, v.New.Files, v.New.DependsOn = f.Get("acceptance_criteria"), f.Get("context"), f.Get("files"), f.Get("depends_on")
	v.New.Open = true
	v.Notice, v.NoticeClass = "Nothing was created: "+why, "warn"
	h.render(w, r, status, "board.html", v)
}
