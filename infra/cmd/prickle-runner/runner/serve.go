package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Serve runs the runner with cfg until ctx ends (Ctrl-C, SIGTERM): it takes
// wake-ups by webhook or pull, and on the way out gives running runs
// SIGTERM and the grace period before SIGKILL, and waits for them.
func Serve(ctx context.Context, cfg Config, out *slog.Logger) error {
	token, err := cfg.Token()
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	r := New(cfg, NewMCPTasks(cfg.PrickleURL), token, out)
	if err := r.Start(ctx); err != nil {
		return err
	}
	var serveErr error
	switch cfg.Mode {
	case ModeWebhook:
		serveErr = serveWebhook(ctx, cfg, r, out)
	case ModePull:
		out.Info("prickle-runner pulling wake-ups", "prickle", cfg.PrickleURL, "agent", cfg.Agent, "concurrency", cfg.Concurrency, "log_dir", cfg.LogDir)
		serveErr = NewPuller(cfg.PrickleURL, token, cfg.Pull.WaitSeconds, r, out).Run(ctx)
	}
	stop()
	out.Info("prickle-runner stopping: runs get SIGTERM, then SIGKILL after the grace period", "grace", cfg.Grace.String())
	r.Wait()
	out.Info("prickle-runner stopped")
	return serveErr
}

func serveWebhook(ctx context.Context, cfg Config, r *Runner, out *slog.Logger) error {
	secret, err := cfg.WebhookSecret()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Webhook.Listen)
	if err != nil {
		return fmt.Errorf("webhook listen: %w", err)
	}
	// Runs held by the agent's model-spend cap wait in Prickle's pull queue: claim them back.
	held := make(chan struct{}, 1)
	r.OnHeld = func() {
		select {
		case held <- struct{}{}:
		default:
		}
	}
	go NewPuller(cfg.PrickleURL, r.AgentToken, cfg.Pull.WaitSeconds, r, out).Drain(ctx, held)
	journal := NewJournal(cfg.StateDir, r.AgentToken)
	pending, err := journal.Pending()
	if err != nil {
		return err
	}
	for _, w := range pending {
		r.Offer(w.RunID, w, ViaJournal, journal.held(w))
	}
	mux := http.NewServeMux()
	mux.Handle(cfg.Webhook.Path, &WebhookHandler{Secret: secret, Runner: r, Journal: &journal, Log: out})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second}
	out.Info("prickle-runner listening for wake-ups", "url", "http://"+ln.Addr().String()+cfg.Webhook.Path,
		"prickle", cfg.PrickleURL, "agent", cfg.Agent, "concurrency", cfg.Concurrency, "log_dir", cfg.LogDir)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("webhook server: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("webhook shutdown: %w", err)
	}
	return nil
}
