package endpoint_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/oauthresource"
	"github.com/useprickle/prickle/shared/mcp/endpoint"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

const oauthBase = "https://prickle.example"

// oauthStack is the in-process endpoint with OAuth on: alice/claude-web's
// access tokens for this resource, for another one and without the scope,
// beside alice/writer's agent token.
func oauthStack(t *testing.T) http.Handler {
	t.Helper()
	st := teamtest.New()
	st.AddProject(team.Project{Slug: "website-v2", Name: "Website v2", StepDeadline: time.Hour})
	st.AddAgent(team.Agent{ID: "alice/writer", Owner: "alice", Projects: []string{"website-v2"}})
	st.AddAgent(team.Agent{ID: "alice/claude-web", Owner: "alice", Projects: []string{"website-v2"}})
	exp := time.Now().Add(time.Hour)
	oauth := func(audience string, scopes ...string) identity.Token {
		return identity.Token{Kind: identity.KindOAuth, Agent: "alice/claude-web", ExpiresAt: &exp, Audience: audience, Scopes: scopes, Client: "c1", Family: "f1"}
	}
	toks := tokens{
		agentSecret:       {Kind: identity.KindAgent, Agent: "alice/writer"},
		"prk_o_good":      oauth(oauthBase+"/mcp", oauthresource.Scope),
		"prk_o_elsewhere": oauth("https://other.example/mcp", oauthresource.Scope),
		"prk_o_noscope":   oauth(oauthBase + "/mcp"),
	}
	h, err := endpoint.InProcess(endpoint.Config{
		Service: team.New(st), Tokens: toks, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OAuth: oauthresource.New(oauthBase, toks),
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestOAuthAccessTokens: with OAuth on, an access token issued for this
// resource reads the room as its agent; one for another resource, an
// unknown one, none, or one in the query string gets 401 naming the
// resource metadata; one without the scope gets 403 insufficient_scope;
// the agent token works as before.
func TestOAuthAccessTokens(t *testing.T) {
	h := oauthStack(t)
	readRoom := func() map[string]any {
		return map[string]any{"name": "read_room", "arguments": map[string]any{"project": "website-v2"}}
	}
	for _, e := range eras {
		for _, c := range []struct {
			name, secret, query string
			want                int
			challenge           string
		}{
			{"this resource's token", "prk_o_good", "", http.StatusOK, ""},
			{"the agent token", agentSecret, "", http.StatusOK, ""},
			{"another resource's token", "prk_o_elsewhere", "", http.StatusUnauthorized, `error="invalid_token"`},
			{"an unknown token", "prk_o_unknown", "", http.StatusUnauthorized, `error="invalid_token"`},
			{"no token", "", "", http.StatusUnauthorized, `scope="prickle"`},
			{"the token in the query string", "", "?access_token=prk_o_good", http.StatusUnauthorized, `scope="prickle"`},
			{"a token without the scope", "prk_o_noscope", "", http.StatusForbidden, `error="insufficient_scope"`},
		} {
			req := e.request(t, c.secret, "tools/call", "read_room", readRoom())
			if c.secret == "" {
				req.Header.Del("Authorization")
			}
			req.URL.RawQuery = strings.TrimPrefix(c.query, "?")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != c.want {
				t.Errorf("%s, %s: HTTP %d, want %d: %s", e.name, c.name, w.Code, c.want, w.Body.String())
				continue
			}
			got := w.Header().Get("WWW-Authenticate")
			if c.challenge == "" {
				if got != "" || !strings.Contains(w.Body.String(), `"structuredContent"`) {
					t.Errorf("%s, %s: challenge %q, body %s", e.name, c.name, got, w.Body.String())
				}
				continue
			}
			if !strings.Contains(got, `resource_metadata="`+oauthBase+`/.well-known/oauth-protected-resource/mcp"`) || !strings.Contains(got, c.challenge) {
				t.Errorf("%s, %s: WWW-Authenticate = %q, want resource_metadata and %s", e.name, c.name, got, c.challenge)
			}
		}
	}
}

// TestOAuthCallerIsTheChosenAgent: the caller is the agent stored with the
// token (the one the owner chose at consent).
func TestOAuthCallerIsTheChosenAgent(t *testing.T) {
	h := oauthStack(t)
	res := eras[1].call(t, h, "prk_o_good", "tools/call", "update_pulse", map[string]any{"name": "update_pulse", "arguments": map[string]any{
		"project": "website-v2", "doing": "connected from the web",
	}})
	var out struct {
		Pulse struct {
			AgentID string `json:"agent_id"`
		} `json:"pulse"`
	}
	b, _ := json.Marshal(res["structuredContent"])
	if err := json.Unmarshal(b, &out); err != nil || out.Pulse.AgentID != "alice/claude-web" {
		t.Errorf("update_pulse as the OAuth token: %s", b)
	}
}
