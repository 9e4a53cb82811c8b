package store_test

import (
	"github.com/useprickle/prickle/shared/admin"
	"github.com/useprickle/prickle/shared/store"
)

// The store is the admin commands' store too; checked here, so the adapter
// itself does not import the operator package.
var _ admin.Store = (*store.Store)(nil)
