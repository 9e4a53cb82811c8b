// Package settings reads what the web and notify functions are configured
// with: the approval links' HMAC key, the Slack bot token, the public base
// URL. Secrets come from the environment (local runs) or from SSM Parameter
// Store SecureStrings (the cloud), through one small port; they are never logged.
package settings

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/useprickle/prickle/shared/auth/link"
	"github.com/useprickle/prickle/shared/aws/awsenv"
)

// Parameters reads a (decrypted) SSM parameter; the SSM adapter implements it, tests fake it.
type Parameters interface {
	Parameter(ctx context.Context, name string) (string, error)
}

// SSM reads SecureString parameters with decryption. It makes the one
// call Prickle needs (GetParameter, JSON 1.1, signed with SigV4) itself
// rather than linking the whole SSM SDK, which would add megabytes to the
// web and notify binaries for a single request at start.
type SSM struct {
	Config   aws.Config
	Endpoint string // https://ssm.<region>.amazonaws.com unless set (tests)
	HTTP     *http.Client
}

// NewSSM builds the SSM adapter from an AWS config.
func NewSSM(cfg aws.Config) *SSM {
	return &SSM{Config: cfg, Endpoint: "https://ssm." + cfg.Region + ".amazonaws.com", HTTP: &http.Client{Timeout: 10 * time.Second}}
}

// Parameter returns the decrypted value of an SSM parameter.
func (s *SSM) Parameter(ctx context.Context, name string) (string, error) {
	body, err := json.Marshal(map[string]any{"Name": name, "WithDecryption": true})
	if err != nil {
		return "", fmt.Errorf("read SSM parameter %s: %w", name, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("read SSM parameter %s: %w", name, err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "AmazonSSM.GetParameter")
	creds, err := s.Config.Credentials.Retrieve(ctx)
	if err != nil {
		return "", fmt.Errorf("read SSM parameter %s: credentials: %w", name, err)
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "ssm", s.Config.Region, time.Now()); err != nil {
		return "", fmt.Errorf("read SSM parameter %s: sign: %w", name, err)
	}
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return "", fmt.Errorf("read SSM parameter %s: %w", name, err)
	}
	defer resp.Body.Close()
	var out struct {
		Parameter *struct{ Value string }
		Type      string `json:"__type"`
		Message   string `json:"message"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil {
		return "", fmt.Errorf("read SSM parameter %s: HTTP %d: %w", name, resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("read SSM parameter %s: HTTP %d: %s %s", name, resp.StatusCode, out.Type, out.Message)
	}
	if out.Parameter == nil {
		return "", fmt.Errorf("read SSM parameter %s: empty answer", name)
	}
	return out.Parameter.Value, nil
}

// LazySSM builds the SSM client on first use, so a function configured
// entirely from the environment never loads AWS configuration for it.
type LazySSM struct {
	ssm *SSM
}

// Parameter builds the SSM reader from the function's environment once, then reads the parameter.
func (l *LazySSM) Parameter(ctx context.Context, name string) (string, error) {
	if l.ssm == nil {
		l.ssm = NewSSM(awsenv.Config())
	}
	return l.ssm.Parameter(ctx, name)
}

// Env looks up an environment variable; os.Getenv by default, a map in tests.
type Env func(name string) string

// OS is the process environment.
var OS Env = os.Getenv

// secret resolves a value given directly (env name) or by SSM parameter
// name (env paramName); the direct value wins. Both empty gives "".
func secret(ctx context.Context, env Env, params Parameters, name, paramName string) (string, error) {
	if v := env(name); v != "" {
		return v, nil
	}
	p := env(paramName)
	if p == "" {
		return "", nil
	}
	if params == nil {
		return "", fmt.Errorf("%s names SSM parameter %s, but no SSM reader is configured", paramName, p)
	}
	v, err := params.Parameter(ctx, p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", paramName, err)
	}
	return v, nil
}

// Signer builds the approval-link signer from SIGNING_KEY or the SSM
// parameter named by SIGNING_KEY_PARAMETER; a missing or short key is an
// error, since links signed with it would be forgeable.
func Signer(ctx context.Context, env Env, params Parameters) (link.Signer, error) {
	key, err := secret(ctx, env, params, "SIGNING_KEY", "SIGNING_KEY_PARAMETER")
	if err != nil {
		return link.Signer{}, fmt.Errorf("signing key: %w", err)
	}
	if key == "" {
		return link.Signer{}, fmt.Errorf("signing key: set SIGNING_KEY or SIGNING_KEY_PARAMETER")
	}
	s, err := link.NewSigner([]byte(key))
	if err != nil {
		return link.Signer{}, fmt.Errorf("signing key: %w", err)
	}
	return s, nil
}

// SlackBotToken reads SLACK_BOT_TOKEN or the SSM parameter named by
// SLACK_BOT_TOKEN_PARAMETER; "" means Slack is off.
func SlackBotToken(ctx context.Context, env Env, params Parameters) (string, error) {
	t, err := secret(ctx, env, params, "SLACK_BOT_TOKEN", "SLACK_BOT_TOKEN_PARAMETER")
	if err != nil {
		return "", fmt.Errorf("slack bot token: %w", err)
	}
	return strings.TrimSpace(t), nil
}

// PublicBaseURL is where the web pages are served (PUBLIC_BASE_URL), without a trailing slash.
func PublicBaseURL(env Env) string {
	return strings.TrimSuffix(env("PUBLIC_BASE_URL"), "/")
}

// FromEmail is the SES sender (FROM_EMAIL); "" means email is off.
func FromEmail(env Env) string { return strings.TrimSpace(env("FROM_EMAIL")) }

// SlackSigningSecret reads SLACK_SIGNING_SECRET or the SSM parameter named
// by SLACK_SIGNING_SECRET_PARAMETER (the Slack app's signing secret, which
// verifies its interactivity requests); "" means the endpoint is off.
func SlackSigningSecret(ctx context.Context, env Env, params Parameters) (string, error) {
	s, err := secret(ctx, env, params, "SLACK_SIGNING_SECRET", "SLACK_SIGNING_SECRET_PARAMETER")
	if err != nil {
		return "", fmt.Errorf("slack signing secret: %w", err)
	}
	return strings.TrimSpace(s), nil
}

// AllowedOrigins lists the browser origins the MCP endpoint serves
// (PRICKLE_ALLOWED_ORIGINS, comma-separated exact origins such as
// https://app.example.com); empty refuses every request that sends an Origin.
func AllowedOrigins(env Env) []string { return list(env("PRICKLE_ALLOWED_ORIGINS")) }

// ImageHosts lists the hosts whose https images owner pages show without a
// click (PRICKLE_IMAGE_HOSTS, comma-separated exact host names); empty shows none.
func ImageHosts(env Env) []string { return list(env("PRICKLE_IMAGE_HOSTS")) }

// list splits a comma-separated value, dropping blanks and trailing slashes.
func list(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSuffix(strings.TrimSpace(s), "/"); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// WakeVisibility is how long a claimed pull-mode wake-up stays hidden from
// other claims before it comes back (PRICKLE_WAKE_VISIBILITY_SECONDS, 1 to
// 43200); 0 when unset, meaning the default.
func WakeVisibility(env Env) (time.Duration, error) {
	v := strings.TrimSpace(env("PRICKLE_WAKE_VISIBILITY_SECONDS"))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 43200 {
		return 0, fmt.Errorf("PRICKLE_WAKE_VISIBILITY_SECONDS must be whole seconds from 1 to 43200, not %q", v)
	}
	return time.Duration(n) * time.Second, nil
}
