// Command oauth is the Lambda function behind Prickle's OAuth 2.1
// authorization server: metadata, client registration, the
// owner's consent, tokens, the connected-clients page, and the device
// grant by which prickle-runner login joins a runner to an agent.
package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/aws/lambdahttp"
	"github.com/useprickle/prickle/shared/aws/settings"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/owners/oauth"
	"github.com/useprickle/prickle/shared/team/mint"
)

func main() { lambdahttp.Run(build) }

// Alike the other functions' build on purpose: each function is its own composition root and links only what it serves.
func build(ctx context.Context, log *slog.Logger) (http.Handler, error) {
	base := settings.PublicBaseURL(settings.OS)
	if base == "" {
		log.Warn("OAuth is off: set the PublicBaseUrl or DomainName parameter")
		return http.NotFoundHandler(), nil
	}
	signer, err := settings.Signer(ctx, settings.OS, &settings.LazySSM{})
	if err != nil {
		return nil, err
	}
	keys, err := session.NewKeys(signer.Key)
	if err != nil {
		return nil, errors.Join(errors.New("oauth: session keys"), err)
	}
	st := store.FromEnv()
	return oauth.New(oauth.Config{BaseURL: base, Grants: st, Directory: st, Keys: keys, Documents: oauth.NewDocuments(false),
		Device: &oauth.DeviceConfig{Store: st, Mint: mint.New(st)}, Log: log})
}
