package cfn

import (
	"slices"
	"strings"
	"testing"
)

func TestEventRulesOfTheTemplate(t *testing.T) {
	rules, err := loadRealTemplate(t).EventRules(nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, r := range rules {
		if !slices.Equal(r.Source, []string{"prickle"}) {
			t.Errorf("%s: source = %v, want [prickle]", r.Function, r.Source)
		}
		got[r.Function] = append(got[r.Function], r.DetailTypes...)
	}
	want := map[string][]string{
		"WakeupFunction": {"Task Routed", "Result Returned", "Step Decided", "Result Decided"},
		"RouteFunction":  {"Task Completed"},
	}
	for fn, types := range want {
		if !slices.Equal(got[fn], types) {
			t.Errorf("%s detail-types = %v, want %v", fn, got[fn], types)
		}
	}
	if !slices.Contains(got["NotifyFunction"], "Step Requested") || !slices.Contains(got["NotifyFunction"], "Step Decided") {
		t.Errorf("NotifyFunction detail-types = %v, want Step Requested and Step Decided among them", got["NotifyFunction"])
	}
	if _, ok := got["StepExpiryFunction"]; ok {
		t.Error("StepExpiryFunction has a DynamoDB event, not an EventBridge rule")
	}
}

func TestEventRulesRefuseWhatTheyCannotMatch(t *testing.T) {
	tests := []struct {
		name, pattern, wantErr string
	}{
		{"no detail-type", "{source: [prickle]}", "no detail-type"},
		{"prefix matcher", "{detail-type: [{prefix: Task}]}", "exact-string"},
		{"not a list", "{detail-type: Task Routed}", "list of strings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "Resources:\n  F:\n    Type: AWS::Serverless::Function\n    Properties:\n      Events:\n" +
				"        E:\n          Type: EventBridgeRule\n          Properties:\n            EventBusName: !Ref Bus\n" +
				"            Pattern: " + tt.pattern + "\n"
			tpl, err := ParseTemplate([]byte(src))
			if err != nil {
				t.Fatal(err)
			}
			_, err = tpl.EventRules(nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestEventRulesResolveParametersInPatterns(t *testing.T) {
	src := "Parameters:\n  Src: {Type: String, Default: prickle}\n" +
		"Resources:\n  F:\n    Type: AWS::Serverless::Function\n    Properties:\n      Events:\n" +
		"        Api: {Type: Api, Properties: {Path: /x, Method: get}}\n" +
		"        E:\n          Type: EventBridgeRule\n          Properties:\n            EventBusName: !Ref Bus\n" +
		"            Pattern: {source: [!Ref Src], detail-type: [Task Routed]}\n"
	tpl, err := ParseTemplate([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := tpl.EventRules(map[string]string{"Src": "other"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 || rules[0].Function != "F" || rules[0].Name != "E" || rules[0].Source[0] != "other" || rules[0].DetailTypes[0] != "Task Routed" {
		t.Fatalf("rules = %+v", rules)
	}
	if _, err := tpl.EventRules(map[string]string{"Nope": "x"}); err == nil {
		t.Fatal("an undeclared parameter was accepted")
	}
}

func TestStreamSourcesOfTheTemplate(t *testing.T) {
	got, err := loadRealTemplate(t).StreamSources()
	if err != nil {
		t.Fatal(err)
	}
	want := []StreamSource{{Function: "StepExpiryFunction", Table: "StepsTable"}, {Function: "TaskEventsFunction", Table: "TasksTable"}}
	if !slices.Equal(got, want) {
		t.Errorf("stream sources = %v, want %v", got, want)
	}
}

func TestStreamSourcesRefuseAStreamTheyCannotName(t *testing.T) {
	src := "Resources:\n  F:\n    Type: AWS::Serverless::Function\n    Properties:\n      Events:\n" +
		"        E:\n          Type: DynamoDB\n          Properties:\n            Stream: !Ref SomeArn\n"
	tpl, err := ParseTemplate([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tpl.StreamSources(); err == nil || !strings.Contains(err.Error(), "GetAtt") {
		t.Fatalf("err = %v, want one naming !GetAtt", err)
	}
}
