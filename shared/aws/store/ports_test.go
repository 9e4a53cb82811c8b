package store_test

import (
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/jobs/wake"
	"github.com/useprickle/prickle/shared/team/admin"
	"github.com/useprickle/prickle/shared/team/spendcap"
)

// The store is the admin commands' store too; checked here, so the adapter
// itself does not import the operator package.
var _ admin.Store = (*store.Store)(nil)

// The store keeps the waker's records (shared/domain/wakeup) and is its Hooks;
// checked here, so the adapter itself does not import the waking behaviour.
var _ wake.Hooks = (*store.Store)(nil)

// The store keeps the team's model spend (shared/team/spendcap's Store).
var _ spendcap.Store = (*store.Store)(nil)
