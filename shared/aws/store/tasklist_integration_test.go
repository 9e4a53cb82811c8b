//go:build integration

package store_test

import (
	"testing"

	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

// TestListTasksContract holds the DynamoDB store to the ListTasks contract
// the fake keeps too (teamtest.RunContract), each case on fresh tables.
func TestListTasksContract(t *testing.T) {
	teamtest.RunContract(t, func(t *testing.T) team.Store { return storetest.New(t).Store })
}
