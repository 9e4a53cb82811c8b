package cfn

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// Rule is one EventBridgeRule event of a SAM function: which function the
// bus delivers to and the detail-types its pattern matches. The local stack
// delivers events by these rules so it routes exactly as the cloud does.
type Rule struct {
	Function    string   // logical id of the AWS::Serverless::Function
	Name        string   // the event's name under the function's Events
	Source      []string // Pattern.source, if any
	DetailTypes []string // Pattern.detail-type
}

// EventRules reads every AWS::Serverless::Function's EventBridgeRule events,
// in template order, so local delivery and the deployed rules cannot drift.
// Only the patterns are resolved (Ref/Sub on parameters); a rule whose
// pattern names no detail-type, or uses a matcher other than plain strings,
// is an error rather than a rule that silently matches nothing.
func (t *Template) EventRules(given map[string]string) ([]Rule, error) {
	r, err := t.resolver(given)
	if err != nil {
		return nil, err
	}
	var rules []Rule
	err = t.functionEvents("EventBridgeRule", func(function, name string, props *yaml.Node) error {
		pattern, err := r.resolve(mappingValue(props, "Pattern"))
		if err != nil {
			return err
		}
		if pattern == nil {
			return fmt.Errorf("EventBridgeRule has no Pattern")
		}
		rule := Rule{Function: function, Name: name}
		if rule.Source, err = stringList(mappingValue(pattern, "source")); err != nil {
			return fmt.Errorf("source: %w", err)
		}
		if rule.DetailTypes, err = stringList(mappingValue(pattern, "detail-type")); err != nil {
			return fmt.Errorf("detail-type: %w", err)
		}
		if len(rule.DetailTypes) == 0 {
			return fmt.Errorf("pattern names no detail-type")
		}
		rules = append(rules, rule)
		return nil
	})
	return rules, err
}

// functionEvents calls fn with the Properties of every event of type typ of
// every AWS::Serverless::Function, in template order; an error names the
// function and the event.
func (t *Template) functionEvents(typ string, fn func(function, name string, props *yaml.Node) error) error {
	for _, res := range t.resources {
		if res.typ != "AWS::Serverless::Function" {
			continue
		}
		events := mappingValue(res.properties, "Events")
		if events == nil {
			continue
		}
		for i := 0; i+1 < len(events.Content); i += 2 {
			name, ev := events.Content[i].Value, events.Content[i+1]
			if et := mappingValue(ev, "Type"); et == nil || et.Value != typ {
				continue
			}
			if err := fn(res.logicalID, name, mappingValue(ev, "Properties")); err != nil {
				return fmt.Errorf("function %s event %s: %w", res.logicalID, name, err)
			}
		}
	}
	return nil
}

// stringList decodes a pattern's list of exact strings; nil is an empty list.
func stringList(n *yaml.Node) ([]string, error) {
	if n == nil {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("line %d: want a list of strings", n.Line)
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: only exact-string matching is supported locally", c.Line)
		}
		out = append(out, c.Value)
	}
	return out, nil
}
