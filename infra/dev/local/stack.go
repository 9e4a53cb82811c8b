package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/useprickle/prickle/infra/cmd/prickle-admin/dynamo"
	"github.com/useprickle/prickle/infra/cmd/prickle-admin/localjson"
	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/auth/oauthresource"
	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/aws/bus"
	"github.com/useprickle/prickle/shared/aws/cfn"
	prconfig "github.com/useprickle/prickle/shared/aws/settings"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"github.com/useprickle/prickle/shared/jobs/route"
	"github.com/useprickle/prickle/shared/jobs/runnerapi"
	"github.com/useprickle/prickle/shared/jobs/stepexpiry"
	"github.com/useprickle/prickle/shared/jobs/taskevents"
	wakeupjob "github.com/useprickle/prickle/shared/jobs/wakeup"
	"github.com/useprickle/prickle/shared/mcp/endpoint"
	"github.com/useprickle/prickle/shared/owners/notify"
	"github.com/useprickle/prickle/shared/owners/notify/outbox"
	"github.com/useprickle/prickle/shared/owners/oauth"
	"github.com/useprickle/prickle/shared/owners/slack"
	"github.com/useprickle/prickle/shared/owners/web"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
	"github.com/useprickle/prickle/shared/team/mint"
)

// localParams are the template parameters of the local stack.
var localParams = map[string]string{"Stage": "local"}

// environment is the prepared stack: its store, tables, rules and demo tokens.
type environment struct {
	store  *store.Store
	tables map[string]string
	rules  []cfn.Rule
	// streams are the functions reading table streams, which the stack follows with these clients.
	streams       []cfn.StreamSource
	client        *dynamodb.Client
	streamsClient *dynamodbstreams.Client
	tokens        map[string]string
	signer        link.Signer
	// slackSecret is the Slack signing secret the local /slack/interactivity verifies with.
	slackSecret string
	// seeded is true when this start seeded the store (else it held an earlier seed).
	seeded bool
}

// prepare creates the tables template.yaml declares, seeds an empty store,
// and settles the demo tokens and the approval links' signing key.
func prepare(ctx context.Context, cfg config, endpointURL string) (*environment, error) {
	tmpl, err := cfn.LoadTemplate(cfg.template)
	if err != nil {
		return nil, err
	}
	specs, err := tmpl.Tables(localParams)
	if err != nil {
		return nil, err
	}
	names, err := tmpl.TableNames(localParams)
	if err != nil {
		return nil, err
	}
	rules, err := tmpl.EventRules(localParams)
	if err != nil {
		return nil, err
	}
	streams, err := tmpl.StreamSources()
	if err != nil {
		return nil, err
	}
	client, err := dynamo.Client(ctx, endpointURL)
	if err != nil {
		return nil, err
	}
	if err := cfn.CreateTables(ctx, client, specs); err != nil {
		return nil, fmt.Errorf("create tables from %s: %w", cfg.template, err)
	}
	st := store.New(client, store.Tables{
		Tasks: names["TasksTable"], Steps: names["StepsTable"], Pulse: names["PulseTable"], Directory: names["DirectoryTable"],
		Wakeups: names["WakeupsTable"], OAuth: names["OAuthTable"],
	})
	adm := admin.New(st)
	seeded := !seededAlready(ctx, st)
	if seeded {
		if err := seed(ctx, adm, st); err != nil {
			return nil, err
		}
		fmt.Println("seeded     website-v2 (alice, bob) and mobile-app (carol)")
	} else if err := backfillSlackUsers(ctx, st); err != nil {
		return nil, err
	}
	prev, err := localjson.Read(filepath.Join(cfg.stateDir, "local.json"))
	if err != nil {
		return nil, err
	}
	tokens, err := demoTokens(ctx, adm, st, prev.Tokens)
	if err != nil {
		return nil, err
	}
	key, err := signingKey(filepath.Join(cfg.stateDir, "signing.key"))
	if err != nil {
		return nil, err
	}
	signer, err := link.NewSigner(key)
	if err != nil {
		return nil, err
	}
	// Kept like signing.key; local.json carries it so tests can sign Slack's requests.
	slackKey, err := signingKey(filepath.Join(cfg.stateDir, "slack-signing.secret"))
	if err != nil {
		return nil, err
	}
	return &environment{store: st, tables: names, rules: rules, streams: streams, client: client, streamsClient: storetest.NewStreamsClient(endpointURL),
		tokens: tokens, signer: signer, slackSecret: hex.EncodeToString(slackKey), seeded: seeded}, nil
}

// backfillSlackUsers gives the seeded owners of a state seeded before they
// had Slack user ids theirs, so the Slack buttons work without PRICKLE_FRESH;
// an id set since (create-owner --slack-user) is kept.
func backfillSlackUsers(ctx context.Context, st *store.Store) error {
	for _, seeded := range seedOwners {
		o, err := st.Owner(ctx, seeded.Name)
		if errors.Is(err, team.ErrNotFound) || (err == nil && (o.SlackUserID != "" || seeded.SlackUserID == "")) {
			continue
		}
		if err != nil {
			return fmt.Errorf("backfill Slack user of %s: %w", seeded.Name, err)
		}
		o.SlackUserID = seeded.SlackUserID
		if err := st.PutOwner(ctx, o); err != nil {
			return fmt.Errorf("backfill Slack user of %s: %w", seeded.Name, err)
		}
	}
	return nil
}

// signingKey keeps a 32-byte secret (the approval links' HMAC key, the Slack
// signing secret) across restarts, so links in the outbox of an earlier run still open.
func signingKey(path string) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil {
		if key, err := hex.DecodeString(string(b)); err == nil && len(key) >= 32 {
			return key, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	if err := os.WriteFile(path, []byte(hex.EncodeToString(key)), 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return key, nil
}

// handler wires what the cloud runs as separate functions into one process:
// /mcp routed by header to per-tool endpoints as the custom domain does, the
// web pages, Slack's interactivity endpoint, the runners' claim and ack
// endpoints (pull mode), the dev outbox, the event rules of template.yaml delivering
// to notify, wake and route in-process, and the stream functions (step-expiry, task-events) fed from the
// emulator's table streams. Every agent's wake URL is the
// stack's own receiver, so wake-ups land in the outbox too.
func (e *environment) handler(ctx context.Context, log *slog.Logger, baseURL string) (http.Handler, error) {
	box := outbox.New()
	svc := team.New(e.store)
	notifier := &notify.Notifier{Owners: e.store, Ledger: e.store, Mail: box, Slack: box, Signer: e.signer, BaseURL: baseURL, Now: time.Now, Log: log.With("function", "notify")}
	waker := wakeupjob.NewWaker(e.store, admin.New(e.store))
	rules := make([]bus.Rule, len(e.rules))
	for i, r := range e.rules {
		rules[i] = bus.Rule{Function: r.Function, DetailTypes: r.DetailTypes}
	}
	local, err := bus.NewLocal(rules, map[string]event.Handler{
		"NotifyFunction": notifier.Handle,
		wakeupjob.Target: bus.Once(wakeupjob.Target, e.store, waker.Handle),
		route.Target:     bus.Once(route.Target, e.store, route.New(svc).Handle),
	})
	if err != nil {
		return nil, fmt.Errorf("local event rules: %w", err)
	}
	svc.Events = local
	// The stream functions, fed by polling the emulator's streams.
	err = e.followStreams(ctx, log, map[string]streamHandler{
		"StepExpiryFunction": stepexpiry.New(svc, local).Handle,
		"TaskEventsFunction": taskevents.New(e.store, local).Handle,
	})
	if err != nil {
		return nil, err
	}

	if err := e.registerWakeHooks(ctx, baseURL); err != nil {
		return nil, err
	}
	// Browser pages of the stack's own origin, under either loopback name,
	// may call /mcp, and so may the origins PRICKLE_ALLOWED_ORIGINS names.
	origins := append([]string{baseURL, strings.Replace(baseURL, "127.0.0.1", "localhost", 1)}, prconfig.AllowedOrigins(prconfig.OS)...)
	resource := oauthresource.New(baseURL, e.store)
	mcp, err := endpoint.InProcess(endpoint.Config{Service: svc, Tokens: e.store, Log: log, AllowedOrigins: origins, OAuth: resource})
	if err != nil {
		return nil, err
	}
	// Owners' sign-in links go out like approval requests: into the dev outbox.
	spend := team.NewModelSpend(e.store, local, log.With("function", "spend"))
	pages := web.New(web.Config{Service: svc, Spend: spend, Store: e.store, Signer: e.signer, BaseURL: baseURL, Outbox: box, Now: time.Now, Log: log.With("function", "web")})
	receiver := wakeupjob.NewReceiver(e.store, func(_ context.Context, agent string, p wakeup.Payload) error {
		body, _ := json.Marshal(p)
		box.Add(outbox.Message{Channel: outbox.ChannelWake, To: agent, Subject: "wake " + agent + ": " + p.Reason + " " + p.TaskID,
			Text: fmt.Sprintf("run %s for task %s (%s)", p.RunID, p.TaskID, p.Reason), Body: body})
		return nil
	})
	// Slack's buttons: the dev outbox stands in for views.open and the
	// response_url (nothing is sent to Slack; no URL from a payload is called).
	slackHandler := slack.New(slack.Config{
		Secret: []byte(e.slackSecret), Replays: e.store, Signer: e.signer, Owners: e.store, Steps: e.store, Decider: svc, Caps: spend, Slack: box,
		Now: time.Now, Log: log.With("function", "slack"),
	})
	visibility, err := prconfig.WakeVisibility(prconfig.OS)
	if err != nil {
		return nil, err
	}
	runners := runnerapi.New(runnerapi.Config{Tokens: e.store, Queue: e.store, Runs: admin.New(e.store), Spend: spend, Settings: team.New(e.store),
		Log: log.With("function", "runner-api"), Visibility: visibility})
	keys, err := session.NewKeys(e.signer.Key)
	if err != nil {
		return nil, err
	}
	// The OAuth authorization server; PRICKLE_OAUTH_LOOPBACK_DOCUMENTS=1 lets
	// client ID metadata documents be served on http://127.0.0.1 (the e2e's).
	authz, err := oauth.New(oauth.Config{BaseURL: baseURL, Grants: e.store, Directory: e.store, Keys: keys,
		Documents: oauth.NewDocuments(os.Getenv("PRICKLE_OAUTH_LOOPBACK_DOCUMENTS") == "1"),
		Device:    &oauth.DeviceConfig{Store: e.store, Mint: mint.New(e.store)}, Log: log.With("function", "oauth")})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp)
	for _, p := range oauth.Paths {
		mux.Handle(p, authz)
	}
	mux.Handle("/runner/", runners)
	mux.Handle(slack.Path, slackHandler)
	mux.Handle(wakeupjob.ReceiverPath, receiver)
	mux.Handle("/", pages)
	return mux, nil
}

// registerWakeHooks points every seeded agent's wake URL at this stack's
// receiver, with a fresh secret each start (the port may have changed). On
// a store seeded earlier, an agent switched to pull mode since (set-wake
// --pull) stays in pull mode.
func (e *environment) registerWakeHooks(ctx context.Context, baseURL string) error {
	for _, agent := range seedAgentOrder {
		if !e.seeded {
			_, err := e.store.WakeHook(ctx, agent)
			if errors.Is(err, team.ErrNotFound) {
				continue
			}
			if err != nil {
				return fmt.Errorf("wake hook of %s: %w", agent, err)
			}
		}
		secret, err := wakeup.NewSecret()
		if err != nil {
			return err
		}
		h := wakeup.Hook{Agent: agent, URL: baseURL + wakeupjob.ReceiverPath + agent, Secret: secret, UpdatedAt: time.Now().UTC()}
		if err := e.store.PutWakeHook(ctx, h); err != nil {
			return fmt.Errorf("wake hook of %s: %w", agent, err)
		}
	}
	return nil
}
