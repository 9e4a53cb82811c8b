// Package store keeps Prickle's data in DynamoDB: tasks and their history,
// request_step's steps, Team Pulse and the directory (projects, owners,
// agents, hashed tokens). It implements team.Store and identity.TokenLookup,
// plus the writes the admin commands need (admin.Store, checked in
// ports_test.go so the adapter does not import the operator package); the
// domain packages never see AWS.
package store

import (
	"os"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/useprickle/prickle/shared/auth/identity"
	"github.com/useprickle/prickle/shared/team"
)

// Tables names the six tables, which differ per stage (prickle-<stage>-*).
type Tables struct {
	Tasks     string // tasks and their history
	Steps     string // request_step's steps (TTL, stream)
	Pulse     string // Team Pulse
	Directory string // projects, owners, agents, tokens
	Wakeups   string // pull-mode wake-ups waiting for a runner (TTL)
	OAuth     string // the OAuth authorization server's clients, codes, refresh tokens and consents (TTL)
}

// TablesFromEnv reads the table names a function or command is configured
// with (TASKS_TABLE, STEPS_TABLE, PULSE_TABLE, DIRECTORY_TABLE, WAKEUPS_TABLE, OAUTH_TABLE), falling back
// to the dev stage's names so a bare local run finds the local tables.
func TablesFromEnv() Tables {
	return Tables{
		Tasks:     envOr("TASKS_TABLE", "prickle-dev-tasks"),
		Steps:     envOr("STEPS_TABLE", "prickle-dev-steps"),
		Pulse:     envOr("PULSE_TABLE", "prickle-dev-pulse"),
		Directory: envOr("DIRECTORY_TABLE", "prickle-dev-directory"),
		Wakeups:   envOr("WAKEUPS_TABLE", "prickle-dev-wakeups"),
		OAuth:     envOr("OAUTH_TABLE", "prickle-dev-oauth"),
	}
}

// FromEnv is the store a function's environment names: the tables of
// TablesFromEnv through the client of NewFunctionClient, on
// PRICKLE_DYNAMODB_ENDPOINT when set (local runs), else DynamoDB itself.
func FromEnv() *Store {
	return New(NewFunctionClient(os.Getenv("PRICKLE_DYNAMODB_ENDPOINT")), TablesFromEnv())
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// Store is the DynamoDB adapter behind the team service and authentication.
type Store struct {
	db     operations
	tables Tables
	// reads are the task reads the moves that follow them start from.
	reads *reads
}

// New wraps a DynamoDB client and the stage's table names; it does no I/O,
// so a Lambda can build it once at start.
func New(client *dynamodb.Client, tables Tables) *Store {
	return &Store{db: operationsOf(client), tables: tables, reads: &reads{}}
}

var (
	_ team.Store           = (*Store)(nil)
	_ identity.TokenLookup = (*Store)(nil)
)
