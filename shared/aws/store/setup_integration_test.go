//go:build integration

package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/domain/task"
)

// fixture is a store over fresh tables of its own, so tests are independent.
type fixture struct {
	store  *store.Store
	client *dynamodb.Client
	tables store.Tables
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	fx := storetest.New(t)
	return fixture{store: fx.Store, client: fx.Client, tables: fx.Tables}
}

// base is the creation time of the first sample task.
var base = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

func created(t task.Task) task.Event {
	return task.Event{At: t.CreatedAt, By: t.Requester, Action: "hand_off", To: t.State}
}

func mustCreate(t *testing.T, f fixture, tk task.Task) {
	t.Helper()
	if err := f.store.CreateTask(context.Background(), tk, created(tk)); err != nil {
		t.Fatalf("create %s: %v", tk.ID, err)
	}
}
