package runnerapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

// ProjectPath is where a run's hook reads its project's file-claim
// settings: POST with the run token and {"project": "<slug>"}.
const ProjectPath = "/runner/project"

// maxProjectSlug bounds the slug a project request may name (slugs are at most 39 characters).
const maxProjectSlug = 64

// Settings reads a project's file-claim settings for a caller; *team.Service is one.
type Settings interface {
	ClaimSettings(ctx context.Context, c identity.Caller, slug string) (team.ClaimSettings, error)
}

type projectRequest struct {
	Project string `json:"project"`
}

// project answers the file-claim settings of a project the run's agent
// belongs to; any other project is a 404, as if it did not exist.
func (h *Handler) project(ctx context.Context, w http.ResponseWriter, caller identity.Caller, body []byte, line *requestLine) {
	var req projectRequest
	if err := json.Unmarshal(body, &req); err != nil || req.Project == "" || len(req.Project) > maxProjectSlug {
		line.outcome = "bad_request"
		writeError(w, http.StatusBadRequest, `body must be JSON {"project": "<the run's project slug>"}`)
		return
	}
	s, err := h.cfg.Settings.ClaimSettings(ctx, caller, req.Project)
	var refusal *task.Refusal
	switch {
	case errors.As(err, &refusal):
		line.outcome = "not_found"
		writeError(w, http.StatusNotFound, refusal.Msg)
	case err != nil:
		line.outcome = "error"
		h.cfg.Log.ErrorContext(ctx, "project settings failed", "caller", caller.Agent, "project", req.Project, "error", err.Error())
		writeError(w, http.StatusInternalServerError, "could not read the project's settings; try again")
	default:
		line.outcome = "ok"
		writeJSON(w, http.StatusOK, s)
	}
}
