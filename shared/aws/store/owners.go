package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// OwnerProjects returns the slugs of the projects the owner's agents belong
// to, sorted: what the owner may see on the pages. One Query of the owner's
// partition, where PutAgent keeps an item per (project, agent) membership.
func (s *Store) OwnerProjects(ctx context.Context, owner string) ([]string, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.tables.Directory),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :in)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": stringValue(ownerPK(owner)), ":in": stringValue(ownedPrefix)},
		ConsistentRead:            aws.Bool(true),
	}
	projects, err := queryAll(ctx, s.db, in, func(r memberRecord) string { return r.Project })
	if err != nil {
		return nil, fmt.Errorf("projects of owner %s: %w", owner, err)
	}
	slices.Sort(projects)
	return slices.Compact(projects), nil
}
