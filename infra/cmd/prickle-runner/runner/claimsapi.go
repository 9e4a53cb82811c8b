package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/domain/pulse"
	"github.com/useprickle/prickle/shared/team"
)

// ClaimSettings is what a run reads of its project to claim files and
// guard edits (POST /runner/project with its run token).
type ClaimSettings = team.ClaimSettings

// window is how long a Team Pulse entry of the project stays live.
func window(s ClaimSettings) time.Duration { return time.Duration(s.PulseStaleSeconds) * time.Second }

// PulseUpdate is one update_pulse call.
type PulseUpdate struct {
	Project, Availability, Doing string
	TaskID, Branch, LastDecision *string
	Files                        []string
}

// Room is how a run claims the files it edits and reads its teammates'
// claims, with its run token: its project's settings, Team Pulse
// (read_room) and its own pulse (update_pulse).
type Room interface {
	ClaimSettings(ctx context.Context, token, project string) (ClaimSettings, error)
	Pulse(ctx context.Context, token, project string) ([]pulse.Entry, error)
	UpdatePulse(ctx context.Context, token string, u PulseUpdate) error
}

// ProjectPath is Prickle's endpoint of a run's project settings
// (shared/jobs/runnerapi's, as the pull paths are).
const ProjectPath = "/runner/project"

// ErrNoClaims is ClaimSettings' answer from a Prickle without file claims
// (no ProjectPath, or a project the run's agent is not in): the run's edits
// are neither claimed nor guarded.
var ErrNoClaims = errors.New("this Prickle has no file claims")

// ClaimSettings reads the project's settings with the run's token.
func (m *MCPTasks) ClaimSettings(ctx context.Context, token, project string) (ClaimSettings, error) {
	body, _ := json.Marshal(map[string]string{"project": project})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.base()+ProjectPath, bytes.NewReader(body))
	if err != nil {
		return ClaimSettings{}, fmt.Errorf("project settings: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := m.HTTP.Do(req)
	if err != nil {
		return ClaimSettings{}, fmt.Errorf("project settings: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return ClaimSettings{}, fmt.Errorf("project settings: %w", err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound, http.StatusForbidden:
		// 404: no such endpoint (or project); 403: API Gateway's REST API on a path it does not route.
		return ClaimSettings{}, fmt.Errorf("project settings: %w (HTTP %d %s)", ErrNoClaims, resp.StatusCode, clip(string(b), 300))
	default:
		return ClaimSettings{}, fmt.Errorf("project settings: HTTP %d %s", resp.StatusCode, clip(string(b), 300))
	}
	var s ClaimSettings
	if err := json.Unmarshal(b, &s); err != nil || s.Agent == "" || s.PulseStaleSeconds <= 0 {
		return ClaimSettings{}, fmt.Errorf("project settings: not settings: %s", clip(string(b), 300))
	}
	if s.FileGuard, err = pulse.Guard(s.FileGuard); err != nil {
		return ClaimSettings{}, fmt.Errorf("project settings: %w", err)
	}
	return s, nil
}

// base is Prickle's base URL: Base, or the MCP endpoint's URL without /mcp
// (a run's helpers know Prickle by its PRICKLE_MCP_URL).
func (m *MCPTasks) base() string {
	if m.Base != "" {
		return m.Base
	}
	return strings.TrimSuffix(m.URL, "/mcp")
}

// Pulse reads Team Pulse of the project with read_room.
func (m *MCPTasks) Pulse(ctx context.Context, token, project string) ([]pulse.Entry, error) {
	b, err := m.call(ctx, token, "read_room", map[string]any{"project": project, "limit": 1})
	if err != nil {
		return nil, err
	}
	var room struct {
		Pulse []pulse.Entry `json:"pulse"`
	}
	if err := json.Unmarshal(b, &room); err != nil {
		return nil, fmt.Errorf("read_room %s: the answer is not a room: %w", project, err)
	}
	return room.Pulse, nil
}

// UpdatePulse reports the run's agent's pulse with update_pulse.
func (m *MCPTasks) UpdatePulse(ctx context.Context, token string, u PulseUpdate) error {
	args := map[string]any{"project": u.Project, "availability": u.Availability, "doing": clip(u.Doing, 200), "files": u.Files}
	for k, v := range map[string]*string{"task_id": u.TaskID, "branch": u.Branch, "last_decision": u.LastDecision} {
		if v != nil {
			args[k] = *v
		}
	}
	_, err := m.call(ctx, token, "update_pulse", args)
	return err
}
