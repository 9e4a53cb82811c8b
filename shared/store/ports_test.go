package store_test

import (
	"github.com/useprickle/prickle/shared/admin"
	"github.com/useprickle/prickle/shared/store"
	"github.com/useprickle/prickle/shared/wake"
)

// The store is the admin commands' store too; checked here, so the adapter
// itself does not import the operator package.
var _ admin.Store = (*store.Store)(nil)

// The store keeps the waker's records (shared/wakeup) and is its Hooks;
// checked here, so the adapter itself does not import the waking behaviour.
var _ wake.Hooks = (*store.Store)(nil)
