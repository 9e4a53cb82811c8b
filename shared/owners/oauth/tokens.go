package oauth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/ory/fosite"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/auth/oauthresource"
)

// Prefixes of the secrets this server issues: access tokens share
// oauthresource's, so /mcp knows where to look them up.
const (
	codePrefix    = "prk_oc_"
	refreshPrefix = "prk_or_"
)

// opaqueTokens is fosite's token strategy for Prickle: random secrets with
// a prefix, whose storage key (fosite's "signature") is the SHA-256 hex of
// the secret, as for every Prickle token. Expiry is checked against the
// stored session, so nothing is signed and no global secret is needed.
type opaqueTokens struct{}

func newSecret(prefix string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("token entropy: %w", err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b), nil
}

func (opaqueTokens) generate(prefix string) (string, string, error) {
	s, err := newSecret(prefix)
	if err != nil {
		return "", "", err
	}
	return s, identity.Hash(s), nil
}

func validate(r fosite.Requester, kind fosite.TokenType, token, prefix string) error {
	if !strings.HasPrefix(token, prefix) {
		return fosite.ErrInvalidTokenFormat
	}
	if exp := r.GetSession().GetExpiresAt(kind); !exp.IsZero() && !time.Now().Before(exp) {
		return fosite.ErrTokenExpired
	}
	return nil
}

// fosite asks each kind of token (access, refresh, authorization code) for
// its signature, a new one and a check by methods of their own names: each
// is a line handing its prefix to generate or validate.

func (opaqueTokens) AccessTokenSignature(_ context.Context, token string) string {
	return identity.Hash(token)
}

func (t opaqueTokens) GenerateAccessToken(context.Context, fosite.Requester) (string, string, error) {
	return t.generate(oauthresource.TokenPrefix)
}

func (opaqueTokens) ValidateAccessToken(_ context.Context, r fosite.Requester, token string) error {
	return validate(r, fosite.AccessToken, token, oauthresource.TokenPrefix)
}

func (opaqueTokens) RefreshTokenSignature(_ context.Context, token string) string {
	return identity.Hash(token)
}

func (t opaqueTokens) GenerateRefreshToken(context.Context, fosite.Requester) (string, string, error) {
	return t.generate(refreshPrefix)
}

func (opaqueTokens) ValidateRefreshToken(_ context.Context, r fosite.Requester, token string) error {
	return validate(r, fosite.RefreshToken, token, refreshPrefix)
}

func (opaqueTokens) AuthorizeCodeSignature(_ context.Context, token string) string {
	return identity.Hash(token)
}

func (t opaqueTokens) GenerateAuthorizeCode(context.Context, fosite.Requester) (string, string, error) {
	return t.generate(codePrefix)
}

func (opaqueTokens) ValidateAuthorizeCode(_ context.Context, r fosite.Requester, token string) error {
	return validate(r, fosite.AuthorizeCode, token, codePrefix)
}
