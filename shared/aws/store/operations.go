package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// operations are the DynamoDB calls the store makes, held as method values
// of one *dynamodb.Client instead of the client itself. A binary that
// executes templates (web, oauth) links text/template's MethodByName, and
// then the linker keeps every exported method of every type an interface
// can reach, through struct fields too: a Store converted to a port would
// drag in every operation of the SDK (about 1 MB). Func fields name only
// the inputs and outputs, so just these operations are linked.
type operations struct {
	GetItem            func(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	BatchGetItem       func(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	PutItem            func(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem         func(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem         func(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	TransactWriteItems func(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	Query              queryFunc
}

// queryFunc is the Query operation, a dynamodb.QueryAPIClient for the SDK's paginator.
type queryFunc func(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)

// Query calls f, so the paginator pages through it.
func (f queryFunc) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return f(ctx, in, opts...)
}

func operationsOf(c *dynamodb.Client) operations {
	return operations{
		GetItem:            c.GetItem,
		BatchGetItem:       c.BatchGetItem,
		PutItem:            c.PutItem,
		UpdateItem:         c.UpdateItem,
		DeleteItem:         c.DeleteItem,
		TransactWriteItems: c.TransactWriteItems,
		Query:              c.Query,
	}
}
