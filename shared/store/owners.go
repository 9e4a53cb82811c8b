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
// to, sorted: what the owner may see on the pages. The directory has no
// index by owner, so this scans the agent items (a filtered Scan, read only
// when an owner opens the list of projects; each project page checks its
// own membership list with one Query instead, see ListAgents).
func (s *Store) OwnerProjects(ctx context.Context, owner string) ([]string, error) {
	in := &dynamodb.ScanInput{
		TableName:                aws.String(s.tables.Directory),
		FilterExpression:         aws.String("#type = :agent AND #owner = :owner AND sk = :meta"),
		ProjectionExpression:     aws.String("projects"),
		ExpressionAttributeNames: map[string]string{"#type": "type", "#owner": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":agent": stringValue("agent"), ":owner": stringValue(owner), ":meta": stringValue(metaSK),
		},
		ConsistentRead: aws.Bool(true),
	}
	projects := []string{}
	p := dynamodb.NewScanPaginator(s.db, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("projects of owner %s: %w", owner, err)
		}
		for _, item := range page.Items {
			var r struct {
				Projects []string `dynamodbav:"projects"`
			}
			if err := unmarshalItem(item, &r); err != nil {
				return nil, fmt.Errorf("projects of owner %s: %w", owner, err)
			}
			projects = append(projects, r.Projects...)
		}
	}
	slices.Sort(projects)
	return slices.Compact(projects), nil
}
