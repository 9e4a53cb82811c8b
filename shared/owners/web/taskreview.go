package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/mcp/catalog"
	"github.com/useprickle/prickle/shared/team"
)

// reviewVerdicts are what the task page says after a review (its decided=).
var reviewVerdicts = map[string]string{task.VerdictAccept: "accepted", task.VerdictRework: "rework", task.VerdictReject: "rejected"}

// reviewOnTask is POST /t/{task} with review=accept|rework|reject: the
// signed-in owner reviews a returned result as review_result does for the
// requester, one of the owner's agents. The form names the result it was
// shown (round), so a review never lands on a newer one; the arguments are
// checked against review_result's input schema and the review is the team
// service's, with its rules; the history and the audit say the owner did
// it on the task page.
func (h *Handler) reviewOnTask(w http.ResponseWriter, r *http.Request, me session.Session, t task.Task, verdict string) {
	infoOf(r).kind = "review"
	if t.Result != nil && r.PostForm.Get("round") != task.ResultRound(t) {
		h.taskRefused(w, r, me, http.StatusConflict, "the result you reviewed is no longer the current one of task "+t.ID+"; read it again below.")
		return
	}
	args := map[string]any{"task_id": t.ID, "verdict": verdict}
	if fb := strings.TrimSpace(normalNewlines(r.PostForm.Get("feedback"))); fb != "" {
		args["feedback"] = fb
	}
	raw, err := json.Marshal(args)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	tool, _ := catalog.Lookup("review_result")
	if err := tool.ValidateInput(raw); err != nil {
		infoOf(r).outcome = "invalid"
		h.taskRefused(w, r, me, http.StatusBadRequest, "invalid arguments for review_result: "+err.Error())
		return
	}
	var in team.ReviewInput
	if err := json.Unmarshal(raw, &in); err != nil {
		h.failed(w, r, err)
		return
	}
	if h.cfg.Service == nil {
		h.failed(w, r, errNoService)
		return
	}
	_, err = h.cfg.Service.ReviewOnBoard(r.Context(), me.Owner, decidedVia(audit.ViaPage, me), in)
	if h.taskFailed(w, r, me, err) {
		return
	}
	infoOf(r).outcome = "review_" + verdict
	w.Header().Set("Location", url.PathEscape(t.ID)+"?decided="+reviewVerdicts[verdict])
	w.WriteHeader(http.StatusSeeOther)
}
