package awsenv

import (
	"context"
	"testing"
)

func TestConfig(t *testing.T) {
	tests := []struct {
		name                   string
		env                    map[string]string
		region, id, secret, st string
	}{
		{"lambda", map[string]string{"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "ASIA1", "AWS_SECRET_ACCESS_KEY": "s", "AWS_SESSION_TOKEN": "tok"}, "eu-west-1", "ASIA1", "s", "tok"},
		{"default region only", map[string]string{"AWS_DEFAULT_REGION": "ap-south-1", "AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s"}, "ap-south-1", "AKIA", "s", ""},
		{"laptop against the emulator", map[string]string{}, LocalRegion, "local", "local", ""},
		{"half-set credentials fall back to dummy ones", map[string]string{"AWS_ACCESS_KEY_ID": "AKIA"}, LocalRegion, "local", "local", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"} {
				t.Setenv(k, tt.env[k])
			}
			cfg := Config()
			creds, err := cfg.Credentials.Retrieve(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Region != tt.region || creds.AccessKeyID != tt.id || creds.SecretAccessKey != tt.secret || creds.SessionToken != tt.st {
				t.Errorf("got region %q creds %q/%q/%q; want %q %q/%q/%q", cfg.Region, creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken, tt.region, tt.id, tt.secret, tt.st)
			}
		})
	}
}
