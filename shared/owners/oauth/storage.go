package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/useprickle/prickle/shared/auth/oauthstate"
	"net/url"
	"time"

	"github.com/ory/fosite"

	"github.com/useprickle/prickle/shared/auth/identity"
)

// storedRequest is what a record keeps of a fosite request: no secret,
// only the form fields the grant checks later (the redirect URI and the
// PKCE challenge).
type storedRequest struct {
	ID                string                 `json:"id"`
	RequestedAt       time.Time              `json:"requested_at"`
	Client            string                 `json:"client_id"`
	RequestedScopes   []string               `json:"requested_scopes"`
	GrantedScopes     []string               `json:"granted_scopes"`
	RequestedAudience []string               `json:"requested_audience"`
	GrantedAudience   []string               `json:"granted_audience"`
	Form              map[string][]string    `json:"form"`
	Session           *fosite.DefaultSession `json:"session"`
}

// keptForm are the form fields a stored request keeps.
var keptForm = []string{"redirect_uri", "code_challenge", "code_challenge_method"}

// storage adapts oauthstate.Store to the storage interfaces fosite's handlers use.
type storage struct {
	grants  oauthstate.Store
	clients func(ctx context.Context, id string) (fosite.Client, error)
}

func encodeRequest(r fosite.Requester) ([]byte, error) {
	s, ok := r.GetSession().(*fosite.DefaultSession)
	if !ok {
		return nil, fmt.Errorf("session of type %T", r.GetSession())
	}
	form := map[string][]string{}
	for _, k := range keptForm {
		if v, ok := r.GetRequestForm()[k]; ok {
			form[k] = v
		}
	}
	return json.Marshal(storedRequest{
		ID: r.GetID(), RequestedAt: r.GetRequestedAt(), Client: r.GetClient().GetID(),
		RequestedScopes: r.GetRequestedScopes(), GrantedScopes: r.GetGrantedScopes(),
		RequestedAudience: r.GetRequestedAudience(), GrantedAudience: r.GetGrantedAudience(),
		Form: form, Session: s,
	})
}

func (s *storage) decodeRequest(ctx context.Context, b []byte) (*fosite.Request, error) {
	var sr storedRequest
	if err := json.Unmarshal(b, &sr); err != nil {
		return nil, fmt.Errorf("decode stored request: %w", err)
	}
	c, err := s.clients(ctx, sr.Client)
	if err != nil {
		return nil, err
	}
	if sr.Session == nil {
		sr.Session = &fosite.DefaultSession{}
	}
	return &fosite.Request{
		ID: sr.ID, RequestedAt: sr.RequestedAt, Client: c,
		RequestedScope: sr.RequestedScopes, GrantedScope: sr.GrantedScopes,
		RequestedAudience: sr.RequestedAudience, GrantedAudience: sr.GrantedAudience,
		Form: url.Values(sr.Form), Session: sr.Session,
	}, nil
}

func (s *storage) put(ctx context.Context, kind, hash string, tokenType fosite.TokenType, r fosite.Requester) error {
	b, err := encodeRequest(r)
	if err != nil {
		return err
	}
	exp := r.GetSession().GetExpiresAt(tokenType)
	if exp.IsZero() {
		exp = time.Now().Add(AuthorizeCodeLifespan)
	}
	return s.grants.PutOAuthRecord(ctx, oauthstate.Record{Kind: kind, Hash: hash, Family: r.GetID(), Active: true, Expires: exp, Request: b})
}

// get reads a record; an inactive one, or one whose grant was revoked,
// comes back with its request and inactive, as fosite's reuse detection needs.
func (s *storage) get(ctx context.Context, kind, hash string, inactive error) (fosite.Requester, error) {
	rec, err := s.grants.OAuthRecord(ctx, kind, hash)
	if errors.Is(err, oauthstate.ErrNotFound) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	req, err := s.decodeRequest(ctx, rec.Request)
	if err != nil {
		return nil, err
	}
	active := rec.Active
	if active && kind != oauthstate.KindPKCE {
		g, err := s.grants.OAuthConnection(ctx, rec.Family)
		switch {
		case errors.Is(err, oauthstate.ErrNotFound):
			active = false
		case err != nil:
			return nil, err
		default:
			active = !g.Revoked
		}
	}
	if !active {
		return req, inactive
	}
	return req, nil
}

func (s *storage) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	return s.clients(ctx, id)
}

// ClientAssertionJWTValid and SetClientAssertionJWT serve JWT client
// authentication, which Prickle's public clients never use.
func (s *storage) ClientAssertionJWTValid(context.Context, string) error { return nil }

func (s *storage) SetClientAssertionJWT(context.Context, string, time.Time) error {
	return fosite.ErrUnsupportedGrantType
}

// CreateAuthorizeCodeSession stores the code and records the grant (the
// owner's consent: which agent, which client) that its tokens descend from.
func (s *storage) CreateAuthorizeCodeSession(ctx context.Context, hash string, r fosite.Requester) error {
	sess, _ := r.GetSession().(*fosite.DefaultSession)
	if sess == nil || sess.Subject == "" || sess.Username == "" {
		return fmt.Errorf("authorize code without an agent")
	}
	name, _ := sess.Extra["client_name"].(string)
	err := s.grants.PutOAuthConnection(ctx, oauthstate.Connection{ID: r.GetID(), Owner: sess.Username, Agent: sess.Subject, Client: r.GetClient().GetID(),
		ClientName: name, CreatedAt: time.Now().UTC()})
	if err != nil {
		return err
	}
	return s.put(ctx, oauthstate.KindCode, hash, fosite.AuthorizeCode, r)
}

func (s *storage) GetAuthorizeCodeSession(ctx context.Context, hash string, _ fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, oauthstate.KindCode, hash, fosite.ErrInvalidatedAuthorizeCode)
}

func (s *storage) InvalidateAuthorizeCodeSession(ctx context.Context, hash string) error {
	err := s.grants.DeactivateOAuthRecord(ctx, oauthstate.KindCode, hash)
	if errors.Is(err, oauthstate.ErrInactive) {
		return fosite.ErrInvalidatedAuthorizeCode
	}
	return err
}

func (s *storage) CreatePKCERequestSession(ctx context.Context, hash string, r fosite.Requester) error {
	return s.put(ctx, oauthstate.KindPKCE, hash, fosite.AuthorizeCode, r)
}

func (s *storage) GetPKCERequestSession(ctx context.Context, hash string, _ fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, oauthstate.KindPKCE, hash, fosite.ErrNotFound)
}

func (s *storage) DeletePKCERequestSession(ctx context.Context, hash string) error {
	return s.grants.DeleteOAuthRecord(ctx, oauthstate.KindPKCE, hash)
}

// CreateAccessTokenSession stores the access token in the directory as the
// agent the owner chose, for the one resource granted.
func (s *storage) CreateAccessTokenSession(ctx context.Context, hash string, r fosite.Requester) error {
	sess, _ := r.GetSession().(*fosite.DefaultSession)
	aud := r.GetGrantedAudience()
	if sess == nil || sess.Subject == "" || len(aud) != 1 {
		return fmt.Errorf("access token needs one agent and one resource")
	}
	exp := sess.GetExpiresAt(fosite.AccessToken)
	return s.grants.PutToken(ctx, identity.Token{Hash: hash, Kind: identity.KindOAuth, Agent: sess.Subject, ExpiresAt: &exp,
		CreatedAt: time.Now().UTC(), Client: r.GetClient().GetID(), Audience: aud[0], Scopes: r.GetGrantedScopes(), Family: r.GetID()})
}

// GetAccessTokenSession is for introspection, which Prickle does not serve:
// /mcp reads access tokens from the directory itself.
func (s *storage) GetAccessTokenSession(context.Context, string, fosite.Session) (fosite.Requester, error) {
	return nil, fosite.ErrNotFound
}

// DeleteAccessTokenSession is not called by the grants Prickle composes;
// access tokens end by revocation or expiry.
func (s *storage) DeleteAccessTokenSession(context.Context, string) error { return nil }

func (s *storage) CreateRefreshTokenSession(ctx context.Context, hash, _ string, r fosite.Requester) error {
	return s.put(ctx, oauthstate.KindRefresh, hash, fosite.RefreshToken, r)
}

func (s *storage) GetRefreshTokenSession(ctx context.Context, hash string, _ fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, oauthstate.KindRefresh, hash, fosite.ErrInactiveToken)
}

func (s *storage) DeleteRefreshTokenSession(ctx context.Context, hash string) error {
	err := s.grants.DeactivateOAuthRecord(ctx, oauthstate.KindRefresh, hash)
	if errors.Is(err, oauthstate.ErrInactive) || errors.Is(err, oauthstate.ErrNotFound) {
		return nil
	}
	return err
}

// RotateRefreshToken marks the used refresh token inactive (one winner when
// two refreshes race: the loser is told the token was used); access tokens
// issued before it run out within AccessTokenLifespan.
func (s *storage) RotateRefreshToken(ctx context.Context, requestID, hash string) error {
	if err := s.grants.DeactivateOAuthRecord(ctx, oauthstate.KindRefresh, hash); err != nil {
		if errors.Is(err, oauthstate.ErrInactive) {
			return fosite.ErrInactiveToken
		}
		return err
	}
	return nil
}

// RevokeRefreshToken and RevokeAccessToken end the whole grant: a replayed
// code or refresh token means someone else may hold its tokens.
func (s *storage) RevokeRefreshToken(ctx context.Context, requestID string) error {
	return s.revoke(ctx, requestID)
}

func (s *storage) RevokeAccessToken(ctx context.Context, requestID string) error {
	return s.revoke(ctx, requestID)
}

func (s *storage) revoke(ctx context.Context, id string) error {
	err := s.grants.RevokeOAuthConnection(ctx, id)
	if errors.Is(err, oauthstate.ErrNotFound) {
		return fosite.ErrNotFound
	}
	return err
}
