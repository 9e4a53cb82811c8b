// Package route is the route function's logic: when a task completes, the
// requested tasks that depended on it are routed to their assignees. The
// team service already tries this as it completes a task; the function is
// the retried path, so a failure there never strands a dependent task.
package route

import (
	"context"
	"fmt"

	"github.com/useprickle/prickle/shared/domain/event"
)

// Router routes a project's tasks that waited on a completed one; *team.Service is one.
type Router interface {
	RouteDependents(ctx context.Context, project, completedID string) error
}

// Handler reacts to Task Completed.
type Handler struct {
	Tasks Router
}

// New builds the handler over the team service.
func New(r Router) *Handler { return &Handler{Tasks: r} }

// Handle routes the dependents of the completed task; other events are
// ignored. Routing is a conditional write per task, so a repeated event routes nothing twice.
func (h *Handler) Handle(ctx context.Context, e event.Event) error {
	if e.Type != event.TaskCompleted {
		return nil
	}
	if e.Project == "" || e.TaskID == "" {
		return fmt.Errorf("route: event %s names no project or task", e.ID)
	}
	if err := h.Tasks.RouteDependents(ctx, e.Project, e.TaskID); err != nil {
		return fmt.Errorf("route dependents of %s: %w", e.TaskID, err)
	}
	return nil
}

// Target is the route function's logical id in template.yaml: the name its
// rule delivers to, the local bus's handler key and its dedup target.
const Target = "RouteFunction"
