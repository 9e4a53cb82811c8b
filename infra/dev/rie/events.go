package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/useprickle/prickle/shared/aws/cfn"
)

// servePutEvents is EventBridge's PutEvents for the functions: each entry
// is delivered, as the template's rules say, to every matching function by
// an asynchronous invoke with the EventBridge envelope, retried on error.
func (s *Stack) servePutEvents(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Entries []struct {
			Source, DetailType, Detail, EventBusName string
			Time                                     *float64
		}
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || !strings.HasSuffix(r.Header.Get("X-Amz-Target"), "PutEvents") {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"ValidationException","message":"only PutEvents is served"}`))
		return
	}
	type result struct {
		EventId string
	}
	out := struct {
		Entries          []result
		FailedEntryCount int
	}{}
	for _, e := range in.Entries {
		id := randomID()
		out.Entries = append(out.Entries, result{EventId: id})
		cw := events.CloudWatchEvent{Version: "0", ID: id, DetailType: e.DetailType, Source: e.Source, AccountID: "000000000000",
			Time: time.Now().UTC(), Region: "us-east-1", Resources: []string{}, Detail: json.RawMessage(e.Detail)}
		payload, _ := json.Marshal(cw)
		for _, rule := range s.rules {
			if !matches(rule, e.Source, e.DetailType) {
				continue
			}
			f := s.byLogical[rule.Function]
			if f == nil {
				s.opts.Log.Warn("rule target not running", "function", rule.Function, "detail_type", e.DetailType)
				continue
			}
			s.deliver.Add(1)
			go func() {
				defer s.deliver.Done()
				s.deliverOne(f, e.DetailType, payload)
			}()
		}
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(out)
}

func (s *Stack) deliverOne(f *Function, detailType string, payload []byte) {
	for attempt := 1; attempt <= 3; attempt++ {
		out, err := s.Invoke(context.Background(), &lambda.InvokeInput{FunctionName: aws.String(f.Name), Payload: payload})
		if err == nil && out.FunctionError == nil {
			select {
			case s.delivered <- f.Name + " " + detailType:
			default:
			}
			return
		}
		msg := ""
		if err != nil {
			msg = err.Error()
		} else {
			msg = string(out.Payload)
		}
		s.opts.Log.Warn("event delivery failed", "function", f.Name, "detail_type", detailType, "attempt", attempt, "error", msg)
		time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
	}
}

func matches(r cfn.Rule, source, detailType string) bool {
	okSource := len(r.Source) == 0
	for _, s := range r.Source {
		okSource = okSource || s == source
	}
	for _, d := range r.DetailTypes {
		if okSource && d == detailType {
			return true
		}
	}
	return false
}
