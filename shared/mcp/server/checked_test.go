package server

import (
	"context"
	"encoding/json"
	"testing"
)

func TestArgumentsCheckedOnlyForTheSameToolAndBytes(t *testing.T) {
	checked := json.RawMessage(`{"task_id":"t1"}`)
	ctx := WithCheckedArguments(context.Background(), "get_task", checked)
	cases := []struct {
		name string
		ctx  context.Context
		tool string
		args json.RawMessage
		want bool
	}{
		{"the bytes checked", ctx, "get_task", json.RawMessage(`{"task_id":"t1"}`), true},
		{"other bytes", ctx, "get_task", json.RawMessage(`{"task_id":"t2"}`), false},
		{"the same value spelled otherwise", ctx, "get_task", json.RawMessage(`{ "task_id": "t1" }`), false},
		{"another tool", ctx, "accept_task", checked, false},
		{"nothing checked", context.Background(), "get_task", checked, false},
		{"empty arguments checked", WithCheckedArguments(context.Background(), "read_room", nil), "read_room", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := argumentsChecked(c.ctx, c.tool, c.args); got != c.want {
				t.Errorf("argumentsChecked = %v, want %v", got, c.want)
			}
		})
	}
}
