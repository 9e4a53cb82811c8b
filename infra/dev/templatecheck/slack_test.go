package template

import (
	"os"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/useprickle/prickle/shared/owners/slack"
)

// TestSlackAppManifestMatchesTheRoute: the app manifest in the repository
// sends interactions where template.yaml routes them (POST to the slack
// function, on the API of either mode), shows the bot's direct messages (sign-in
// links), and asks only for the scope Prickle uses.
func TestSlackAppManifestMatchesTheRoute(t *testing.T) {
	raw, err := os.ReadFile("../../slack/manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Features struct {
			AppHome struct {
				Messages bool `yaml:"messages_tab_enabled"`
				ReadOnly bool `yaml:"messages_tab_read_only_enabled"`
			} `yaml:"app_home"`
		} `yaml:"features"`
		OAuth struct {
			Scopes struct {
				Bot []string `yaml:"bot"`
			} `yaml:"scopes"`
		} `yaml:"oauth_config"`
		Settings struct {
			Interactivity struct {
				Enabled    bool   `yaml:"is_enabled"`
				RequestURL string `yaml:"request_url"`
			} `yaml:"interactivity"`
			SocketMode bool `yaml:"socket_mode_enabled"`
		} `yaml:"settings"`
	}
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	in := m.Settings.Interactivity
	if !in.Enabled || !strings.HasPrefix(in.RequestURL, "https://") || !strings.HasSuffix(in.RequestURL, slack.Path) || m.Settings.SocketMode {
		t.Errorf("interactivity = %+v (socket mode %v), want enabled, https, ending in %s", in, m.Settings.SocketMode, slack.Path)
	}
	// Sign-in links are direct messages from the bot: the owner reads them in its Messages tab.
	if h := m.Features.AppHome; !h.Messages || !h.ReadOnly {
		t.Errorf("app home = %+v, want the Messages tab on, read only (sign-in links arrive there)", h)
	}
	if !slices.Equal(m.OAuth.Scopes.Bot, []string{"chat:write"}) {
		t.Errorf("bot scopes = %v, want only chat:write", m.OAuth.Scopes.Bot)
	}
	tpl := load(t)
	for _, api := range []string{"CoreApi", "HttpApi"} {
		routes, err := tpl.Routes(api)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range routes {
			found = found || (r.Path == slack.Path && r.Method == "POST" && r.Function == "SlackFunction")
		}
		if !found {
			t.Errorf("%s has no POST %s route to SlackFunction: %v", api, slack.Path, routes)
		}
	}
}
