package web

import (
	"cmp"
	"net/http"
	"net/url"
	"strings"

	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/task"
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
	in, why, err := toolInput[team.ReviewInput]("review_result", args)
	if err != nil || h.cfg.Service == nil {
		h.failed(w, r, cmp.Or(err, errNoService))
		return
	}
	if why != "" {
		infoOf(r).outcome = "invalid"
		h.taskRefused(w, r, me, http.StatusBadRequest, why)
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
