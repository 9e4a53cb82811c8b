package settings

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

type params map[string]string

func (p params) Parameter(_ context.Context, name string) (string, error) {
	if v, ok := p[name]; ok {
		return v, nil
	}
	return "", errors.New("ParameterNotFound")
}

func envOf(m map[string]string) Env { return func(k string) string { return m[k] } }

const key32 = "0123456789abcdef0123456789abcdef"

func TestSigner(t *testing.T) {
	ssm := params{"/prickle/signing-key": key32}
	tests := []struct {
		name    string
		env     map[string]string
		params  Parameters
		wantErr string
	}{
		{"from env", map[string]string{"SIGNING_KEY": key32}, nil, ""},
		{"env wins over SSM", map[string]string{"SIGNING_KEY": key32, "SIGNING_KEY_PARAMETER": "/missing"}, ssm, ""},
		{"from SSM", map[string]string{"SIGNING_KEY_PARAMETER": "/prickle/signing-key"}, ssm, ""},
		{"SSM missing parameter", map[string]string{"SIGNING_KEY_PARAMETER": "/missing"}, ssm, "ParameterNotFound"},
		{"SSM not configured", map[string]string{"SIGNING_KEY_PARAMETER": "/prickle/signing-key"}, nil, "no SSM reader"},
		{"nothing", map[string]string{}, ssm, "set SIGNING_KEY"},
		{"too short", map[string]string{"SIGNING_KEY": "short"}, nil, "at least 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Signer(context.Background(), envOf(tt.env), tt.params)
			if tt.wantErr == "" {
				if err != nil || string(s.Key) != key32 {
					t.Errorf("Signer = %q, %v", s.Key, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), key32) {
				t.Error("the error shows the key")
			}
		})
	}
}

func TestSlackBotTokenAndPlainSettings(t *testing.T) {
	ctx := context.Background()
	if tok, err := SlackBotToken(ctx, envOf(nil), nil); err != nil || tok != "" {
		t.Errorf("no token configured = %q, %v; want Slack off", tok, err)
	}
	tok, err := SlackBotToken(ctx, envOf(map[string]string{"SLACK_BOT_TOKEN_PARAMETER": "/slack"}), params{"/slack": "xoxb-1\n"})
	if err != nil || tok != "xoxb-1" {
		t.Errorf("token from SSM = %q, %v", tok, err)
	}
	if sec, err := SlackSigningSecret(ctx, envOf(nil), nil); err != nil || sec != "" {
		t.Errorf("no signing secret configured = %q, %v; want the endpoint off", sec, err)
	}
	sec, err := SlackSigningSecret(ctx, envOf(map[string]string{"SLACK_SIGNING_SECRET_PARAMETER": "/sig"}), params{"/sig": " 8f74\n"})
	if err != nil || sec != "8f74" {
		t.Errorf("signing secret from SSM = %q, %v", sec, err)
	}
	if _, err := SlackSigningSecret(ctx, envOf(map[string]string{"SLACK_SIGNING_SECRET_PARAMETER": "/missing"}), params{}); err == nil {
		t.Error("a missing SSM parameter was not an error")
	}
	env := envOf(map[string]string{"PUBLIC_BASE_URL": "https://app.example.com/", "FROM_EMAIL": " prickle@example.com "})
	if got := PublicBaseURL(env); got != "https://app.example.com" {
		t.Errorf("PublicBaseURL = %q", got)
	}
	if got := FromEmail(env); got != "prickle@example.com" {
		t.Errorf("FromEmail = %q", got)
	}
}

func TestSSMGetParameterIsSignedAndDecoded(t *testing.T) {
	var got *http.Request
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		_ = json.NewDecoder(r.Body).Decode(&body)
		if body["Name"] == "/missing" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"__type":"ParameterNotFound","message":"no such parameter"}`))
			return
		}
		_, _ = w.Write([]byte(`{"Parameter":{"Name":"/prickle/signing-key","Type":"SecureString","Value":"s3cret"}}`))
	}))
	defer srv.Close()
	cfg := aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}
	s := NewSSM(cfg)
	s.Endpoint = srv.URL

	v, err := s.Parameter(context.Background(), "/prickle/signing-key")
	if err != nil || v != "s3cret" {
		t.Fatalf("Parameter = %q, %v; want s3cret", v, err)
	}
	if got.Header.Get("X-Amz-Target") != "AmazonSSM.GetParameter" || got.Header.Get("Content-Type") != "application/x-amz-json-1.1" {
		t.Errorf("headers = %v; want the GetParameter JSON 1.1 call", got.Header)
	}
	if auth := got.Header.Get("Authorization"); !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") || !strings.Contains(auth, "/eu-west-1/ssm/aws4_request") {
		t.Errorf("Authorization = %q; want a SigV4 signature for ssm in eu-west-1", auth)
	}
	if body["WithDecryption"] != true {
		t.Errorf("body = %v; want WithDecryption true", body)
	}
	if _, err := s.Parameter(context.Background(), "/missing"); err == nil || !strings.Contains(err.Error(), "ParameterNotFound") {
		t.Errorf("missing parameter: err = %v; want ParameterNotFound", err)
	}
}

func TestWakeVisibility(t *testing.T) {
	tests := []struct {
		value string
		want  time.Duration
		ok    bool
	}{
		{"", 0, true},
		{"120", 120 * time.Second, true},
		{" 5 ", 5 * time.Second, true},
		{"43200", 12 * time.Hour, true},
		{"0", 0, false},
		{"-3", 0, false},
		{"43201", 0, false},
		{"2m", 0, false},
	}
	for _, tt := range tests {
		got, err := WakeVisibility(envOf(map[string]string{"PRICKLE_WAKE_VISIBILITY_SECONDS": tt.value}))
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("WakeVisibility(%q) = %v, %v; want %v, ok %v", tt.value, got, err, tt.want, tt.ok)
		}
	}
}
