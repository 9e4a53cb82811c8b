//go:build integration

package runnerapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/jobs/runnerapi"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/mint"
)

// TestARunReadsItsProjectSettings: POST /runner/project with a run token
// answers who the run is, the project's file guard and its Team Pulse
// window, as the admin set them; the answer of a project the agent is not
// in is a 404 that does not say whether it exists (TestAttacks).
func TestARunReadsItsProjectSettings(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	tk := e.routed("tsk_project1")
	r, err := e.adm.StartRun(ctx, mint.ByOperator, "alice/writer", tk.ID, "")
	must(t, err)
	read := func() team.ClaimSettings {
		t.Helper()
		code, b := e.post(runnerapi.ProjectPath, r.RunToken, `{"project":"website-v2"}`)
		if code != http.StatusOK {
			t.Fatalf("%s = %d %s", runnerapi.ProjectPath, code, b)
		}
		var s team.ClaimSettings
		must(t, json.Unmarshal(b, &s))
		return s
	}
	want := team.ClaimSettings{Agent: "alice/writer", Project: "website-v2", FileGuard: "deny", PulseStaleSeconds: int64(team.DefaultPulseStaleAfter / time.Second)}
	if got := read(); got != want {
		t.Errorf("settings = %+v, want %+v", got, want)
	}
	must(t, e.adm.SetFileGuard(ctx, "website-v2", "ask"))
	p, err := e.st.Project(ctx, "website-v2")
	must(t, err)
	p.PulseStaleAfter = 5 * time.Minute
	must(t, e.st.PutProject(ctx, p))
	want.FileGuard, want.PulseStaleSeconds = "ask", 300
	if got := read(); got != want {
		t.Errorf("settings after set-file-guard ask and a 5 min window = %+v, want %+v", got, want)
	}
}
