package store

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/domain/step"
)

// toStream converts an SDK item to the Lambda event's attribute values via
// their shared JSON form, as a stream record carries it.
func toStream(t *testing.T, item map[string]types.AttributeValue) map[string]events.DynamoDBAttributeValue {
	t.Helper()
	var conv func(types.AttributeValue) any
	conv = func(v types.AttributeValue) any {
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			return map[string]any{"S": v.Value}
		case *types.AttributeValueMemberN:
			return map[string]any{"N": v.Value}
		case *types.AttributeValueMemberBOOL:
			return map[string]any{"BOOL": v.Value}
		case *types.AttributeValueMemberNULL:
			return map[string]any{"NULL": true}
		case *types.AttributeValueMemberM:
			m := map[string]any{}
			for k, e := range v.Value {
				m[k] = conv(e)
			}
			return map[string]any{"M": m}
		case *types.AttributeValueMemberL:
			l := []any{}
			for _, e := range v.Value {
				l = append(l, conv(e))
			}
			return map[string]any{"L": l}
		}
		t.Fatalf("unexpected attribute %T", v)
		return nil
	}
	m := map[string]any{}
	for k, v := range item {
		m[k] = conv(v)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]events.DynamoDBAttributeValue
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestStepFromImageRoundTripsTheTableCodec(t *testing.T) {
	at := time.Date(2026, 11, 29, 9, 0, 0, 123e6, time.UTC)
	decided := at.Add(time.Minute)
	want := step.Step{
		ID: "s1", TaskID: "t1", Project: "website-v2", Agent: "bo/codex", RunID: "run_1", ToolName: "Bash",
		Input: json.RawMessage(`{"command":"git push"}`), Fingerprint: "fp", Kind: "outbound", Target: "github",
		Amount: &step.Amount{Value: 12.5, Unit: "USD"}, Reason: "ship", Status: step.Approved, Message: "ok",
		DecidedBy: "bo", DecidedAt: &decided, CreatedAt: at, ExpiresAt: decided.Add(step.UseWindow),
	}
	item, err := marshalItem(newStepRecord(want))
	if err != nil {
		t.Fatal(err)
	}
	got, err := StepFromImage(toStream(t, item))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestStepFromImageOfTheSampleRecord(t *testing.T) {
	b, err := os.ReadFile("../../../events/step-expiry-ttl-remove.json")
	if err != nil {
		t.Fatal(err)
	}
	var e events.DynamoDBEvent
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	s, err := StepFromImage(e.Records[0].Change.OldImage)
	if err != nil {
		t.Fatal(err)
	}
	canonical, _ := step.Canonical(s.Input)
	if s.Status != step.Pending || s.TaskID != "tsk_expirydemo0001" || s.Fingerprint != step.Fingerprint(s.TaskID, s.ToolName, canonical) {
		t.Errorf("sample step = %+v", s)
	}
	if s.ExpiresAt.Unix() != 1795942800 {
		t.Errorf("expires_at %v disagrees with the sample's ttl", s.ExpiresAt)
	}
	if _, err := StepFromImage(map[string]events.DynamoDBAttributeValue{"status": events.NewStringAttribute("pending")}); err == nil {
		t.Error("an image without keys decoded")
	}
}
