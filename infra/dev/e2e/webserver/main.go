// Command webserver stands up the approval pages for the browser test
// (infra/dev/e2e/web): fresh tables on the emulator named by
// PRICKLE_DYNAMODB_ENDPOINT, a seeded project whose run asks for a git push
// and whose other task's result waits for its owner, the notifier writing to
// a dev outbox, and the web handler on a loopback port. It prints one JSON
// line ({base_url, step_url, result_url, outbox_url}) taken from the outbox,
// the way an owner gets the links, then serves until SIGTERM or SIGINT.
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/useprickle/prickle/infra/cmd/prickle-admin/dynamo"
	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/aws/cfn"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/owners/notify"
	"github.com/useprickle/prickle/shared/owners/notify/outbox"
	"github.com/useprickle/prickle/shared/owners/web"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := run(ctx, log); err != nil {
		fmt.Fprintln(os.Stderr, "webserver:", err)
		os.Exit(1)
	}
}

// notifyBus delivers the service's events to the notifier, as the bus's rule does.
type notifyBus struct{ n *notify.Notifier }

func (b notifyBus) Publish(ctx context.Context, events ...event.Event) error {
	var errs []error
	for _, e := range events {
		errs = append(errs, b.n.Handle(ctx, e))
	}
	return errors.Join(errs...)
}

func run(ctx context.Context, log *slog.Logger) error {
	endpoint := os.Getenv("PRICKLE_DYNAMODB_ENDPOINT")
	if endpoint == "" {
		return errors.New("PRICKLE_DYNAMODB_ENDPOINT is not set: run under infra/dev/emulator/with-emulator.sh")
	}
	template := os.Getenv("PRICKLE_TEMPLATE")
	if template == "" {
		template = "template.yaml"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer ln.Close()
	base := "http://" + ln.Addr().String()

	st, err := tables(ctx, endpoint, template)
	if err != nil {
		return err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	signer := link.Signer{Key: key}
	box := outbox.New()
	n := &notify.Notifier{Owners: st, Ledger: st, Mail: box, Slack: box, Signer: signer, BaseURL: base, Log: log}
	svc := team.New(st)
	svc.Events = notifyBus{n}
	if err := seed(ctx, st, svc); err != nil {
		return err
	}
	links, err := approvalLinks(box, base)
	if err != nil {
		return err
	}

	srv := &http.Server{Handler: web.New(web.Config{Service: svc, Store: st, Signer: signer, BaseURL: base, Outbox: box, Log: log}), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	out, _ := json.Marshal(links)
	fmt.Println(string(out))

	select {
	case <-ctx.Done():
	case err := <-errc:
		return err
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

func tables(ctx context.Context, endpoint, template string) (*store.Store, error) {
	client, err := dynamo.Client(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	tpl, err := cfn.LoadTemplate(template)
	if err != nil {
		return nil, err
	}
	params := map[string]string{"Stage": fmt.Sprintf("e2eweb-%d", time.Now().UnixNano())}
	specs, err := tpl.Tables(params)
	if err != nil {
		return nil, err
	}
	if err := cfn.CreateTables(ctx, client, specs); err != nil {
		return nil, err
	}
	names, err := tpl.TableNames(params)
	if err != nil {
		return nil, err
	}
	return store.New(client, store.Tables{Tasks: names["TasksTable"], Steps: names["StepsTable"], Pulse: names["PulseTable"], Directory: names["DirectoryTable"], Wakeups: names["WakeupsTable"]}), nil
}

// seed makes alice's agent ask for a git push on one task, and puts another
// task's result in front of alice for approval.
func seed(ctx context.Context, st *store.Store, svc *team.Service) error {
	adm := admin.New(st)
	if err := adm.CreateProject(ctx, team.Project{Slug: "website-v2", Name: "Website v2", OwnerApprovalTypes: []string{"code"}}); err != nil {
		return err
	}
	for _, o := range []team.Owner{{Name: "alice", Email: "alice@example.com", SlackChannel: "C0ALICE"}, {Name: "bob", Email: "bob@example.com"}} {
		if err := adm.CreateOwner(ctx, o); err != nil {
			return err
		}
	}
	for _, a := range []string{"alice/writer", "bob/reviewer"} {
		if err := adm.CreateAgent(ctx, a, []string{"website-v2"}); err != nil {
			return err
		}
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	packet := func(what string) task.Packet {
		return task.Packet{Task: what, DeliverableType: "code", AcceptanceCriteria: []string{"tests pass"}, Files: []string{}, DependsOn: []string{}}
	}
	working := task.Task{ID: "tsk_e2e_push", Project: "website-v2", State: task.Working, Requester: "bob/reviewer", Assignee: "alice/writer",
		Packet: packet("Publish the reviewed branch"), CreatedAt: now, UpdatedAt: now}
	if err := st.CreateTask(ctx, working, task.Event{At: now, By: "bob/reviewer", Action: "hand_off", To: task.Working}); err != nil {
		return err
	}
	run := identity.Caller{Agent: "alice/writer", Owner: "alice", Kind: identity.KindRun, TaskID: working.ID, RunID: "run_e2e"}
	if _, err := svc.RequestStep(ctx, run, team.RequestStepInput{
		ToolName: "Bash", Input: json.RawMessage(`{"command":"git push origin main"}`),
		Kind: "outbound", Target: "origin", Reason: "Publish the reviewed branch.",
	}); err != nil {
		return fmt.Errorf("request step: %w", err)
	}
	approval := task.Task{ID: "tsk_e2e_result", Project: "website-v2", State: task.Approval, Requester: "bob/reviewer", Assignee: "alice/writer",
		Packet: packet("Build the pricing page"),
		Result: &task.Result{Summary: "Pricing page built; all tests pass.", Provenance: task.ProvenanceAgentGenerated, ReturnedBy: "alice/writer", ReturnedAt: now,
			Evidence: []task.Evidence{
				{Kind: "pull_request", Summary: "PR #12: pricing page", URL: "https://github.com/acme/site/pull/12"},
				{Kind: "test_output", Summary: "go test ./...", Content: "ok  \tsite/pricing\t0.21s"},
			}},
		CreatedAt: now, UpdatedAt: now}
	if err := st.CreateTask(ctx, approval, task.Event{At: now, By: "bob/reviewer", Action: "review_accept", To: task.Approval}); err != nil {
		return err
	}
	// The review service publishes Approval Requested; here the seed does, as it wrote the task directly.
	return svc.Events.Publish(ctx, event.ForTask(event.ApprovalRequested, approval, "bob/reviewer", now))
}

// links is what the browser test reads from the first line of output.
type links struct {
	BaseURL   string `json:"base_url"`
	StepURL   string `json:"step_url"`
	ResultURL string `json:"result_url"`
	OutboxURL string `json:"outbox_url"`
}

// approvalLinks takes the approval links from alice's emails in the outbox.
func approvalLinks(box *outbox.Outbox, base string) (links, error) {
	l := links{BaseURL: base, OutboxURL: base + "/dev/outbox"}
	for _, m := range box.List() {
		if m.Channel != outbox.ChannelEmail || len(m.Links) == 0 || !strings.HasPrefix(m.Links[0], base+"/a/") {
			continue
		}
		if strings.Contains(m.Subject, "result") {
			l.ResultURL = m.Links[0]
		} else {
			l.StepURL = m.Links[0]
		}
	}
	if l.StepURL == "" || l.ResultURL == "" {
		return l, fmt.Errorf("the outbox lacks an approval link: %+v", box.List())
	}
	return l, nil
}
