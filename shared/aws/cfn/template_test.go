package cfn

import (
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

const templatePath = "../../../template.yaml"

func loadRealTemplate(t *testing.T) *Template {
	t.Helper()
	tpl, err := LoadTemplate(templatePath)
	if err != nil {
		t.Fatalf("LoadTemplate: %v", err)
	}
	return tpl
}

func TestTableNamesFollowStage(t *testing.T) {
	tpl := loadRealTemplate(t)
	tests := []struct {
		name   string
		params map[string]string
		want   map[string]string
	}{
		{"defaults", nil, map[string]string{
			"TasksTable": "prickle-dev-tasks", "StepsTable": "prickle-dev-steps",
			"PulseTable": "prickle-dev-pulse", "DirectoryTable": "prickle-dev-directory",
			"WakeupsTable": "prickle-dev-wakeups", "OAuthTable": "prickle-dev-oauth",
		}},
		{"stage given", map[string]string{"Stage": "t42"}, map[string]string{
			"TasksTable": "prickle-t42-tasks", "StepsTable": "prickle-t42-steps",
			"PulseTable": "prickle-t42-pulse", "DirectoryTable": "prickle-t42-directory",
			"WakeupsTable": "prickle-t42-wakeups", "OAuthTable": "prickle-t42-oauth",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tpl.TableNames(tt.params)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d tables %v, want %v", len(got), got, tt.want)
			}
			for id, name := range tt.want {
				if got[id] != name {
					t.Errorf("%s = %q, want %q", id, got[id], name)
				}
			}
		})
	}
}

func TestUndeclaredParameterIsRefused(t *testing.T) {
	tpl := loadRealTemplate(t)
	given := map[string]string{"Stag": "x", "Stage": "dev", "Bucket": "y"}
	const want = "parameters Bucket, Stag are not declared in the template"
	tests := []struct {
		name string
		read func() error
	}{
		{"tables", func() error { _, err := tpl.Tables(given); return err }},
		{"event rules", func() error { _, err := tpl.EventRules(given); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.read(); err == nil || err.Error() != want {
				t.Fatalf("err = %v, want %q", err, want)
			}
		})
	}
}

// keys renders a key schema as "pk HASH, sk RANGE" for compact comparisons.
func keys(ks []types.KeySchemaElement) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = aws.ToString(k.AttributeName) + " " + string(k.KeyType)
	}
	return strings.Join(parts, ", ")
}

func TestTablesAsDeclared(t *testing.T) {
	specs, err := loadRealTemplate(t).Tables(map[string]string{"DeletionProtection": "true"})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]TableSpec{}
	for _, s := range specs {
		byID[s.LogicalID] = s
	}
	tests := []struct {
		id      string
		keys    string
		attrs   int
		indexes map[string]string
		stream  types.StreamViewType
		ttl     string
	}{
		{"TasksTable", "pk HASH, sk RANGE", 7, map[string]string{
			"by_project":   "project HASH, created_key RANGE",
			"by_assignee":  "assignee HASH, created_key RANGE",
			"by_requester": "requester HASH, created_key RANGE",
			"by_requested": "requested_project HASH, created_key RANGE",
		}, types.StreamViewTypeNewAndOldImages, "ttl"},
		{"StepsTable", "task_id HASH, step_id RANGE", 2, nil, types.StreamViewTypeNewAndOldImages, "ttl"},
		{"PulseTable", "project HASH, agent_id RANGE", 2, nil, "", ""},
		{"DirectoryTable", "pk HASH, sk RANGE", 4, map[string]string{
			"by_agent": "agent_id HASH, created_at RANGE",
		}, "", "ttl"},
		{"WakeupsTable", "agent_id HASH, wakeup_id RANGE", 2, nil, "", "ttl"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			s, ok := byID[tt.id]
			if !ok {
				t.Fatalf("no table %s in %v", tt.id, specs)
			}
			in := s.Create
			if got := keys(in.KeySchema); got != tt.keys {
				t.Errorf("keys = %s, want %s", got, tt.keys)
			}
			if len(in.AttributeDefinitions) != tt.attrs {
				t.Errorf("%d attribute definitions, want %d", len(in.AttributeDefinitions), tt.attrs)
			}
			if in.BillingMode != types.BillingModePayPerRequest {
				t.Errorf("billing = %s", in.BillingMode)
			}
			if !aws.ToBool(in.DeletionProtectionEnabled) {
				t.Error("DeletionProtection=true did not reach DeletionProtectionEnabled")
			}
			if !s.PointInTimeRecovery {
				t.Error("point-in-time recovery not declared")
			}
			if len(in.GlobalSecondaryIndexes) != len(tt.indexes) {
				t.Errorf("%d indexes, want %d", len(in.GlobalSecondaryIndexes), len(tt.indexes))
			}
			for _, g := range in.GlobalSecondaryIndexes {
				if want := tt.indexes[aws.ToString(g.IndexName)]; keys(g.KeySchema) != want {
					t.Errorf("index %s keys = %s, want %q", aws.ToString(g.IndexName), keys(g.KeySchema), want)
				}
				switch {
				case tt.id != "TasksTable" && g.Projection.ProjectionType != types.ProjectionTypeAll:
					t.Errorf("index %s projects %s", aws.ToString(g.IndexName), g.Projection.ProjectionType)
				case tt.id == "TasksTable" && (g.Projection.ProjectionType != types.ProjectionTypeInclude || slices.Contains(g.Projection.NonKeyAttributes, "pending") || !slices.Contains(g.Projection.NonKeyAttributes, "packet")):
					// The task indexes carry the task, not its pending history lines.
					t.Errorf("index %s projects %s %v, want INCLUDE of the task's attributes without pending", aws.ToString(g.IndexName), g.Projection.ProjectionType, g.Projection.NonKeyAttributes)
				}
			}
			var stream types.StreamViewType
			if in.StreamSpecification != nil {
				stream = in.StreamSpecification.StreamViewType
			}
			if stream != tt.stream {
				t.Errorf("stream = %q, want %q", stream, tt.stream)
			}
			if s.TTLAttribute != tt.ttl {
				t.Errorf("ttl = %q, want %q", s.TTLAttribute, tt.ttl)
			}
		})
	}
}

func TestIntrinsicForms(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		want    string
		wantErr string
	}{
		{"short Sub", "!Sub prickle-${Stage}-x", "prickle-dev-x", ""},
		{"long Sub", "{'Fn::Sub': 'prickle-${Stage}-x'}", "prickle-dev-x", ""},
		{"Sub with variables", "!Sub ['${A}-${Stage}', {A: !Ref Stage}]", "dev-dev", ""},
		{"Sub literal escape", "!Sub 'a-${!Stage}'", "a-${Stage}", ""},
		{"short Ref", "!Ref Stage", "dev", ""},
		{"long Ref", "{Ref: Stage}", "dev", ""},
		{"plain", "fixed-name", "fixed-name", ""},
		{"GetAtt", "!GetAtt Other.Arn", "", "!GetAtt"},
		{"Sub of a resource attribute", "!Sub '${Other.Arn}'", "", "Other.Arn"},
		{"Ref of a resource", "!Ref Other", "", "Ref Other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "Parameters:\n  Stage: {Type: String, Default: dev}\n" +
				"Resources:\n" +
				"  Other: {Type: AWS::Serverless::Function, Properties: {CodeUri: !GetAtt X.Y}}\n" +
				"  T:\n    Type: AWS::DynamoDB::Table\n    Properties:\n" +
				"      TableName: " + tt.value + "\n" +
				"      KeySchema: [{AttributeName: pk, KeyType: HASH}]\n"
			tpl, err := ParseTemplate([]byte(src))
			if err != nil {
				t.Fatal(err)
			}
			names, err := tpl.TableNames(nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if names["T"] != tt.want {
				t.Errorf("name = %q, want %q", names["T"], tt.want)
			}
		})
	}
}

func TestUnsupportedPropertyIsRefused(t *testing.T) {
	src := "Resources:\n  T:\n    Type: AWS::DynamoDB::Table\n    Properties:\n" +
		"      TableName: t\n      LocalSecondaryIndexes: []\n      Tags: []\n"
	tpl, err := ParseTemplate([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, err = tpl.Tables(nil)
	if err == nil || !strings.Contains(err.Error(), "LocalSecondaryIndexes") || strings.Contains(err.Error(), "Tags") {
		t.Fatalf("err = %v, want one naming LocalSecondaryIndexes only", err)
	}
}
