// Command admin is Prickle's operator CLI: create projects, owners and
// agents; mint and revoke agent tokens; start a run for a task (minting its
// run token); list and decide steps; register agents' wake webhooks. Token
// and generated webhook secrets are printed once; tokens are stored only as hashes.
//
// Usage: go run ./infra/cmd/prickle-admin <command> [flags]   (add --local to use the running `make local` stack)
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/useprickle/prickle/infra/cmd/prickle-admin/dynamo"
	"github.com/useprickle/prickle/infra/cmd/prickle-admin/localjson"
	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/domain/audit"
	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/domain/wakeup"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
	"github.com/useprickle/prickle/shared/team/mint"
)

const usage = `usage: go run ./infra/cmd/prickle-admin <command> [--local] [flags]

commands:
  create-project --slug S --name N [--owner-approval code,doc] [--step-deadline 24h]
  set-file-guard --project P --guard deny|ask|warn   what runners do with an edit of a file another
                 agent of the project holds: stop it (deny, the default), ask the editing agent's
                 owner (ask), or let it go ahead with a warning (warn); see docs/file-claims.md
  create-owner   --name N [--email E] [--slack-channel C] [--slack-user U]
                 --slack-user is the owner's Slack member id (U0123ABC): only that
                 person may press Approve / Refuse on the owner's Slack messages, and
                 sign-in links reach Slack only as a direct message to it (never the channel)
  set-slack-user --owner O --slack-user U      records an existing owner's Slack member id, keeping the rest
  create-agent   --id owner/agent --projects p1,p2
  mint-token     --agent owner/agent           prints the new agent token once
  revoke-tokens  --agent owner/agent           revokes every token of the agent
  start-run      --agent owner/agent --task T [--resumes RUN]   prints run_id and run token once
  steps          --task T                      lists the task's steps
  decide-step    --owner O --task T --step S (--approve | --refuse) [--message M]
  set-wake       --agent owner/agent --url U [--secret S]   registers the agent's wake webhook;
                 without --secret one is generated and printed once
  set-wake       --agent owner/agent --pull   removes the agent's webhook: its wake-ups are stored
                 for its runner to claim (POST /runner/claim with the agent token)
  grants         --project P                   lists the project's standing grants (live, expired, revoked)
  revoke-grant   --owner O --project P --grant G   revokes a grant the owner gave
  set-budget     --owner O --project P --unit USD --limit 50 [--amount-field F [--amount-tool T]] [--auto-allow]
                 the owner's daily budget per agent for their agents in the project; auto-allow
                 needs the input field (of tool T's calls) that holds a call's amount in the unit
  audit          --project P [--format csv|json]   prints the project's audit trail
  reopen-signin  --owner O [--client ADDR]     clears O's count of sign-in links of the current window,
                 when strangers used it up; the addresses that did stay refused until it ends,
                 but for --client (an address, as the sign-in log names it): its counts are cleared too
  reopen-registrations                         clears the count of dynamic OAuth registrations of the
                 current window; the networks that filled it stay refused until it ends

--local reads the emulator endpoint and table names from .prickle/local.json
(PRICKLE_STATE_DIR to change the folder); otherwise they come from the
environment: PRICKLE_DYNAMODB_ENDPOINT (optional), TASKS_TABLE, STEPS_TABLE,
PULSE_TABLE, DIRECTORY_TABLE, WAKEUPS_TABLE, OAUTH_TABLE, and the usual AWS credentials and region.`

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	out, err := run(context.Background(), os.Args[1], os.Args[2:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "admin:", err)
		os.Exit(1)
	}
	if r, ok := out.(raw); ok {
		_, _ = os.Stdout.Write(r)
		return
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
}

// raw is output printed as it is (the audit CSV), not as JSON.
type raw []byte

// refusalAsError turns a domain refusal into a plain error for the operator.
func refusalAsError[T any](v T, err error) (any, error) {
	var refusal *task.Refusal
	if errors.As(err, &refusal) {
		return nil, errors.New(refusal.Msg)
	}
	return v, err
}

func run(ctx context.Context, command string, args []string) (any, error) {
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	local := fs.Bool("local", false, "use the running local stack (.prickle/local.json)")
	slug := fs.String("slug", "", "project slug")
	name := fs.String("name", "", "display name (project) or owner name")
	approval := fs.String("owner-approval", "", "deliverable types whose results need owner approval, comma-separated")
	deadline := fs.Duration("step-deadline", 24*time.Hour, "how long a pending step waits for its owner")
	email := fs.String("email", "", "owner email")
	slack := fs.String("slack-channel", "", "owner Slack channel")
	slackUser := fs.String("slack-user", "", "owner Slack member id (U0123ABC), who may decide from Slack buttons and gets sign-in links as a DM")
	id := fs.String("id", "", "agent id owner/agent")
	projects := fs.String("projects", "", "project slugs, comma-separated")
	agent := fs.String("agent", "", "agent id owner/agent")
	taskID := fs.String("task", "", "task id")
	resumes := fs.String("resumes", "", "run id this run resumes")
	owner := fs.String("owner", "", "owner deciding")
	stepID := fs.String("step", "", "step id")
	approve := fs.Bool("approve", false, "approve the step")
	refuse := fs.Bool("refuse", false, "refuse the step")
	message := fs.String("message", "", "message to the agent")
	wakeURL := fs.String("url", "", "wake webhook URL (set-wake)")
	wakeSecret := fs.String("secret", "", "wake webhook signing secret (set-wake); generated when omitted")
	pullMode := fs.Bool("pull", false, "pull mode: remove the agent's webhook (set-wake)")
	project := fs.String("project", "", "project slug (grants, revoke-grant, set-budget, audit, set-file-guard)")
	grantID := fs.String("grant", "", "grant id (revoke-grant)")
	unit := fs.String("unit", "", "budget unit, e.g. USD (set-budget)")
	limit := fs.String("limit", "", "budget per agent per day, in units (set-budget)")
	autoAllow := fs.Bool("auto-allow", false, "allow spending within the budget without asking (set-budget; needs --amount-field)")
	amountField := fs.String("amount-field", "", "input field that holds a call's amount in the unit (set-budget)")
	amountTool := fs.String("amount-tool", "", "the one tool whose calls --amount-field reads; any tool's if omitted (set-budget)")
	format := fs.String("format", "csv", "audit output: csv or json")
	guard := fs.String("guard", "", "file guard: deny, ask or warn (set-file-guard)")
	client := fs.String("client", "", "a client address whose sign-in counts are cleared too (reopen-signin)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	st, err := openStore(ctx, *local)
	if err != nil {
		return nil, err
	}
	adm := admin.New(st)
	need := needs[command]
	if command == "set-wake" && !*pullMode {
		need = append(slices.Clone(need), "url")
	}
	if err := needFlags(fs, need); err != nil {
		return nil, err
	}
	switch command {
	case "create-project":
		p := team.Project{Slug: *slug, Name: *name, OwnerApprovalTypes: split(*approval), StepDeadline: *deadline}
		return map[string]any{"project": p.Slug}, adm.CreateProject(ctx, p)
	case "set-file-guard":
		return map[string]any{"project": *project, "file_guard": *guard}, adm.SetFileGuard(ctx, *project, *guard)
	case "create-owner":
		return map[string]any{"owner": *name}, adm.CreateOwner(ctx, team.Owner{Name: *name, Email: *email, SlackChannel: *slack, SlackUserID: *slackUser})
	case "set-slack-user":
		return map[string]any{"owner": *owner, "slack_user": *slackUser}, adm.SetSlackUser(ctx, *owner, *slackUser)
	case "reopen-signin":
		now := time.Now().UTC()
		n, err := st.ReopenSignIn(ctx, *owner, now)
		out := map[string]any{"owner": *owner, "links_counted": n, "window_ends": now.Truncate(session.SignInWindow).Add(session.SignInWindow)}
		if err == nil && *client != "" {
			out["client"] = *client
			out["client_requests_counted"], err = st.ReopenSignInFrom(ctx, *owner, *client, now)
		}
		return out, err
	case "reopen-registrations":
		now := time.Now().UTC()
		n, err := st.ReopenOAuthRegistrations(ctx, now)
		return map[string]any{"registrations_counted": n, "window_ends": now.Truncate(oauthstate.RegistrationWindow).Add(oauthstate.RegistrationWindow)}, err
	case "create-agent":
		return map[string]any{"agent": *id, "projects": split(*projects)}, adm.CreateAgent(ctx, *id, split(*projects))
	case "mint-token":
		secret, err := adm.MintAgentToken(ctx, *agent)
		return map[string]any{"agent": *agent, "token": secret}, err
	case "revoke-tokens":
		n, err := adm.RevokeAgentTokens(ctx, *agent)
		return map[string]any{"agent": *agent, "revoked": n}, err
	case "start-run":
		return adm.StartRun(ctx, mint.ByOperator, *agent, *taskID, *resumes)
	case "steps":
		return st.StepsForTask(ctx, *taskID)
	case "decide-step":
		if *approve == *refuse {
			return nil, errors.New("decide-step needs exactly one of --approve or --refuse")
		}
		return adm.DecideStep(ctx, *owner, *taskID, *stepID, *approve, *message)
	case "set-wake":
		if *pullMode {
			if *wakeURL != "" || *wakeSecret != "" {
				return nil, errors.New("set-wake takes either --pull or --url [--secret], not both")
			}
			return map[string]any{"agent": *agent, "mode": "pull"}, st.DeleteWakeHook(ctx, *agent)
		}
		return setWake(ctx, st, *agent, *wakeURL, *wakeSecret)
	case "grants":
		return st.ProjectGrants(ctx, *project)
	case "revoke-grant":
		return refusalAsError(team.New(st).RevokeGrant(ctx, *owner, *project, *grantID, audit.ViaAdmin))
	case "set-budget":
		perDay, err := budget.Parse(*limit)
		if err != nil {
			return nil, err
		}
		b := budget.Budget{Project: *project, Owner: *owner, Unit: *unit, PerAgentPerDay: perDay, AutoAllow: *autoAllow, AmountField: *amountField, AmountTool: *amountTool}
		return refusalAsError(team.New(st).SetBudget(ctx, b, audit.ViaAdmin))
	case "audit":
		entries, err := team.New(st).ProjectAudit(ctx, *project)
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		switch *format {
		case "csv":
			err = audit.WriteCSV(&b, entries)
		case "json":
			err = audit.WriteJSON(&b, entries)
		default:
			return nil, fmt.Errorf("audit --format is csv or json, not %q", *format)
		}
		return raw(b.Bytes()), err
	}
	return nil, fmt.Errorf("unknown command %q\n\n%s", command, usage)
}

// setWake registers an agent's wake hook. A generated secret is printed
// once, like tokens; a secret the operator gave is never echoed.
func setWake(ctx context.Context, st *store.Store, agent, url, secret string) (any, error) {
	generated := secret == ""
	if generated {
		var err error
		if secret, err = wakeup.NewSecret(); err != nil {
			return nil, err
		}
	}
	if err := st.PutWakeHook(ctx, wakeup.Hook{Agent: agent, URL: url, Secret: secret, UpdatedAt: time.Now().UTC()}); err != nil {
		return nil, err
	}
	out := map[string]any{"agent": agent, "url": url}
	if generated {
		out["secret"] = secret
	}
	return out, nil
}

// openStore connects to the local stack's emulator or to the configured tables.
func openStore(ctx context.Context, local bool) (*store.Store, error) {
	endpoint, tables := os.Getenv("PRICKLE_DYNAMODB_ENDPOINT"), store.TablesFromEnv()
	if local {
		dir := os.Getenv("PRICKLE_STATE_DIR")
		if dir == "" {
			dir = ".prickle"
		}
		b, err := os.ReadFile(dir + "/local.json")
		if err != nil {
			return nil, fmt.Errorf("--local needs a running `make local` (%w)", err)
		}
		var s localjson.State
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("parse %s/local.json: %w", dir, err)
		}
		endpoint = s.DynamoDBEndpoint
		tables = store.Tables{Tasks: s.Tables["TasksTable"], Steps: s.Tables["StepsTable"], Pulse: s.Tables["PulseTable"], Directory: s.Tables["DirectoryTable"],
			Wakeups: s.Tables["WakeupsTable"], OAuth: s.Tables["OAuthTable"]}
	}
	client, err := dynamo.Client(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	return store.New(client, tables), nil
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// needs names the flags each command cannot go without (set-wake without
// --pull needs --url too).
var needs = map[string][]string{
	"create-project": {"slug"},
	"set-file-guard": {"project", "guard"},
	"create-owner":   {"name"},
	"set-slack-user": {"owner", "slack-user"},
	"reopen-signin":  {"owner"},
	"create-agent":   {"id", "projects"},
	"mint-token":     {"agent"},
	"revoke-tokens":  {"agent"},
	"start-run":      {"agent", "task"},
	"steps":          {"task"},
	"decide-step":    {"owner", "task", "step"},
	"set-wake":       {"agent"},
	"grants":         {"project"},
	"revoke-grant":   {"owner", "project", "grant"},
	"set-budget":     {"owner", "project", "unit", "limit"},
	"audit":          {"project"},
}

// needFlags says which of the flags named are empty in fs, sorted:
// "create-agent needs --id, --projects".
func needFlags(fs *flag.FlagSet, names []string) error {
	var missing []string
	for _, f := range names {
		if fs.Lookup(f).Value.String() == "" {
			missing = append(missing, "--"+f)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	return fmt.Errorf("%s needs %s", fs.Name(), strings.Join(missing, ", "))
}
