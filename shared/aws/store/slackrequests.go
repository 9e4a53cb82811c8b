package store

import (
	"context"
	"fmt"
	"time"
)

// Replay markers of Slack's signed requests, in the directory table:
//
//	slack request  pk SLACKREQ#<timestamp>:<signature>  sk SLACKREQ  at, ttl
//
// A signed request from Slack is accepted once: its marker is put only if
// absent. The ttl lets DynamoDB drop it once the request's timestamp is
// outside Slack's 5-minute window anyway. No agent_id, so the by_agent index ignores it.
const slackRequestSK = "SLACKREQ"

// SlackRequestRetention is how long a marker is kept: past the 5-minute window on both sides.
const SlackRequestRetention = 15 * time.Minute

// FirstSlackRequest records a signed Slack request by its id (timestamp and
// signature) with one conditional put: true the first time, false when the
// same request was seen before (a replay).
func (s *Store) FirstSlackRequest(ctx context.Context, id string, now time.Time) (bool, error) {
	if id == "" {
		return false, fmt.Errorf("record slack request: no id")
	}
	first, err := s.putMarker(ctx, "SLACKREQ#"+id, slackRequestSK, "slack_request", now, now.Add(SlackRequestRetention))
	if err != nil {
		return false, fmt.Errorf("record slack request: %w", err)
	}
	return first, nil
}
