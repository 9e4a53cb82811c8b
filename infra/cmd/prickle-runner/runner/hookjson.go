package runner

import (
	"encoding/json"
	"fmt"
)

// A CLI's hook input and answer are its own JSON; these read and write
// what is alike in them.

// hookInput is one CLI's hook input (opencode's: its plugin's), its own
// JSON; call is the call it gives the gate, Skip set for an event the gate
// does not judge.
type hookInput interface{ call() gateCall }

// parseHook reads a CLI's hook input as H: input that is not JSON, or a call
// to judge that names no tool, is an error (the gate denies). from names
// what sent it in those errors ("hook", "plugin").
func parseHook[H hookInput](b []byte, from string) (gateCall, error) {
	var h H
	if err := json.Unmarshal(b, &h); err != nil {
		return gateCall{}, fmt.Errorf("the %s's input is not JSON", from)
	}
	c := h.call()
	if !c.Skip && c.Tool == "" {
		return gateCall{}, fmt.Errorf("the %s's input names no tool", from)
	}
	return c, nil
}

// beforeOrAfter is the call of a hook input whose event is before (or, with
// no event, a call to judge); after's events (a call made) give the call,
// skipped, for its file claims; any other event is skipped.
func beforeOrAfter(event, before string, after []string, c gateCall) gateCall {
	for _, a := range after {
		if event == a {
			c.Skip = true
			return c
		}
	}
	if event != "" && event != before {
		return gateCall{Skip: true}
	}
	return c
}

// answerJSON is a CLI's hook answer o as JSON; an o that cannot be (an
// edited input that is not JSON: never run it) is the CLI's deny instead,
// "deny" under decision and gateFailed under reason.
func answerJSON(o any, decision, reason string) []byte {
	b, err := json.Marshal(o)
	if err != nil {
		b, _ = json.Marshal(map[string]string{decision: "deny", reason: gateFailed})
	}
	return b
}

// flatAnswer is the answer of a CLI that reads one flat object, by the
// names it reads: the decision ("allow" or "deny"), the reason, the
// arguments the call runs with (an owner's edit; absent: as asked) and the
// note of an edit for the model.
type flatAnswer struct{ decision, reason, args, note string }

func (n flatAnswer) json(a gateAnswer) []byte {
	o := map[string]any{n.decision: "deny"}
	if a.Reason != "" {
		o[n.reason] = a.Reason
	}
	if a.Allow {
		o[n.decision] = "allow"
		if len(a.Input) > 0 {
			o[n.args] = a.Input
		}
		if a.Note != "" {
			o[n.note] = a.Note
		}
	}
	return answerJSON(o, n.decision, n.reason)
}
