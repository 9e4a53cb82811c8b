package store_test

import (
	"github.com/useprickle/prickle/shared/aws/store"
	wakeupjob "github.com/useprickle/prickle/shared/jobs/wakeup"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
)

// The store is the admin commands' store too; checked here, so the adapter
// itself does not import the operator package.
var _ admin.Store = (*store.Store)(nil)

// The store keeps the waker's records (shared/domain/wakeup) and is its Hooks;
// checked here, so the adapter itself does not import the waking behaviour.
var _ wakeupjob.Hooks = (*store.Store)(nil)

// The store keeps the team's model spend (team.ModelSpendStore).
var _ team.ModelSpendStore = (*store.Store)(nil)
