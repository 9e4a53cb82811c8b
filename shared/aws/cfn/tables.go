package cfn

import (
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"gopkg.in/yaml.v3"
)

// tableType is the CloudFormation resource type this package stands up.
const tableType = "AWS::DynamoDB::Table"

// TableSpec is one table as the template declares it, ready for DynamoDB's API.
type TableSpec struct {
	LogicalID string
	// Create is the CreateTable request: keys, attributes, indexes, billing, stream.
	Create *dynamodb.CreateTableInput
	// TTLAttribute is the time-to-live attribute, empty when the table has none.
	TTLAttribute string
	// PointInTimeRecovery is whether continuous backups are declared.
	PointInTimeRecovery bool
}

// Name is the physical table name.
func (s TableSpec) Name() string { return aws.ToString(s.Create.TableName) }

// tableProperties mirrors the AWS::DynamoDB::Table properties this package applies.
type tableProperties struct {
	TableName                 string                `yaml:"TableName"`
	BillingMode               string                `yaml:"BillingMode"`
	DeletionProtectionEnabled bool                  `yaml:"DeletionProtectionEnabled"`
	AttributeDefinitions      []attributeDefinition `yaml:"AttributeDefinitions"`
	KeySchema                 []keyElement          `yaml:"KeySchema"`
	GlobalSecondaryIndexes    []globalIndex         `yaml:"GlobalSecondaryIndexes"`
	ProvisionedThroughput     *throughput           `yaml:"ProvisionedThroughput"`
	StreamSpecification       *struct {
		StreamViewType string `yaml:"StreamViewType"`
	} `yaml:"StreamSpecification"`
	TimeToLiveSpecification *struct {
		AttributeName string `yaml:"AttributeName"`
		Enabled       bool   `yaml:"Enabled"`
	} `yaml:"TimeToLiveSpecification"`
	PointInTimeRecoverySpecification *struct {
		PointInTimeRecoveryEnabled bool `yaml:"PointInTimeRecoveryEnabled"`
	} `yaml:"PointInTimeRecoverySpecification"`
}

// appliedProperties are the property names tableProperties reads.
var appliedProperties = map[string]bool{
	"TableName": true, "BillingMode": true, "DeletionProtectionEnabled": true,
	"AttributeDefinitions": true, "KeySchema": true, "GlobalSecondaryIndexes": true,
	"ProvisionedThroughput": true, "StreamSpecification": true,
	"TimeToLiveSpecification": true, "PointInTimeRecoverySpecification": true,
}

// cloudOnlyProperties change nothing a local table's callers can observe, so
// they are skipped; any other property is refused rather than silently dropped.
var cloudOnlyProperties = map[string]bool{
	"Tags": true, "SSESpecification": true, "ContributorInsightsSpecification": true,
	"TableClass": true, "ResourcePolicy": true, "KinesisStreamSpecification": true,
}

type attributeDefinition struct {
	AttributeName string `yaml:"AttributeName"`
	AttributeType string `yaml:"AttributeType"`
}

type keyElement struct {
	AttributeName string `yaml:"AttributeName"`
	KeyType       string `yaml:"KeyType"`
}

type globalIndex struct {
	IndexName  string       `yaml:"IndexName"`
	KeySchema  []keyElement `yaml:"KeySchema"`
	Projection struct {
		ProjectionType   string   `yaml:"ProjectionType"`
		NonKeyAttributes []string `yaml:"NonKeyAttributes"`
	} `yaml:"Projection"`
	ProvisionedThroughput *throughput `yaml:"ProvisionedThroughput"`
}

type throughput struct {
	ReadCapacityUnits  int64 `yaml:"ReadCapacityUnits"`
	WriteCapacityUnits int64 `yaml:"WriteCapacityUnits"`
}

// Tables returns every AWS::DynamoDB::Table of the template, in template
// order, with parameters resolved (params over the template's defaults).
func (t *Template) Tables(params map[string]string) ([]TableSpec, error) {
	r, err := t.resolver(params)
	if err != nil {
		return nil, err
	}
	var specs []TableSpec
	for _, res := range t.resources {
		if res.typ != tableType {
			continue
		}
		spec, err := tableSpec(r, res)
		if err != nil {
			return nil, fmt.Errorf("resource %s: %w", res.logicalID, err)
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// TableNames maps each table's logical ID (TasksTable) to its physical name
// (prickle-dev-tasks), for setting TASKS_TABLE and friends.
func (t *Template) TableNames(params map[string]string) (map[string]string, error) {
	specs, err := t.Tables(params)
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(specs))
	for _, s := range specs {
		names[s.LogicalID] = s.Name()
	}
	return names, nil
}

func tableSpec(r resolver, res resource) (TableSpec, error) {
	if res.properties == nil || res.properties.Kind != yaml.MappingNode {
		return TableSpec{}, fmt.Errorf("no Properties")
	}
	var unsupported []string
	for i := 0; i+1 < len(res.properties.Content); i += 2 {
		name := res.properties.Content[i].Value
		if !appliedProperties[name] && !cloudOnlyProperties[name] {
			unsupported = append(unsupported, name)
		}
	}
	if len(unsupported) > 0 {
		sort.Strings(unsupported)
		return TableSpec{}, fmt.Errorf("properties %s are not supported by the local stack", strings.Join(unsupported, ", "))
	}
	resolved, err := r.resolve(res.properties)
	if err != nil {
		return TableSpec{}, err
	}
	var p tableProperties
	if err := resolved.Decode(&p); err != nil {
		return TableSpec{}, fmt.Errorf("decode properties: %w", err)
	}
	if p.TableName == "" {
		return TableSpec{}, fmt.Errorf("no TableName (a local stack needs a fixed name)")
	}

	in := &dynamodb.CreateTableInput{
		TableName:                 aws.String(p.TableName),
		BillingMode:               types.BillingMode(p.BillingMode),
		DeletionProtectionEnabled: aws.Bool(p.DeletionProtectionEnabled),
		KeySchema:                 keySchema(p.KeySchema),
		ProvisionedThroughput:     p.ProvisionedThroughput.sdk(),
	}
	if in.BillingMode == "" {
		in.BillingMode = types.BillingModeProvisioned
	}
	for _, a := range p.AttributeDefinitions {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{
			AttributeName: aws.String(a.AttributeName),
			AttributeType: types.ScalarAttributeType(a.AttributeType),
		})
	}
	for _, g := range p.GlobalSecondaryIndexes {
		proj := &types.Projection{ProjectionType: types.ProjectionType(g.Projection.ProjectionType)}
		if len(g.Projection.NonKeyAttributes) > 0 {
			proj.NonKeyAttributes = g.Projection.NonKeyAttributes
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName:             aws.String(g.IndexName),
			KeySchema:             keySchema(g.KeySchema),
			Projection:            proj,
			ProvisionedThroughput: g.ProvisionedThroughput.sdk(),
		})
	}
	if p.StreamSpecification != nil {
		in.StreamSpecification = &types.StreamSpecification{
			StreamEnabled:  aws.Bool(true),
			StreamViewType: types.StreamViewType(p.StreamSpecification.StreamViewType),
		}
	}

	spec := TableSpec{LogicalID: res.logicalID, Create: in}
	if ttl := p.TimeToLiveSpecification; ttl != nil && ttl.Enabled {
		spec.TTLAttribute = ttl.AttributeName
	}
	if pitr := p.PointInTimeRecoverySpecification; pitr != nil {
		spec.PointInTimeRecovery = pitr.PointInTimeRecoveryEnabled
	}
	return spec, nil
}

func keySchema(keys []keyElement) []types.KeySchemaElement {
	out := make([]types.KeySchemaElement, len(keys))
	for i, k := range keys {
		out[i] = types.KeySchemaElement{AttributeName: aws.String(k.AttributeName), KeyType: types.KeyType(k.KeyType)}
	}
	return out
}

func (t *throughput) sdk() *types.ProvisionedThroughput {
	if t == nil {
		return nil
	}
	return &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(t.ReadCapacityUnits), WriteCapacityUnits: aws.Int64(t.WriteCapacityUnits)}
}
