//go:build integration

package main

import (
	"testing"

	"github.com/useprickle/prickle/shared/aws/store/storetest"
)

// deployedTables points the CLI at fx's tables the way a deployment does: by
// the environment (without --local).
func deployedTables(t *testing.T, fx storetest.Fixture) {
	t.Helper()
	t.Setenv("TASKS_TABLE", fx.Tables.Tasks)
	t.Setenv("STEPS_TABLE", fx.Tables.Steps)
	t.Setenv("PULSE_TABLE", fx.Tables.Pulse)
	t.Setenv("DIRECTORY_TABLE", fx.Tables.Directory)
	t.Setenv("WAKEUPS_TABLE", fx.Tables.Wakeups)
	t.Setenv("OAUTH_TABLE", fx.Tables.OAuth)
}
