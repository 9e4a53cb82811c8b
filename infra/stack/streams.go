package stack

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// StreamSource is one DynamoDB event of a SAM function: which function reads
// which table's stream. The local stack polls those streams and hands their
// records to the same handlers, as Lambda's event source mappings do.
type StreamSource struct {
	Function string // logical id of the AWS::Serverless::Function
	Table    string // logical id of the AWS::DynamoDB::Table whose stream it reads
}

// StreamSources reads every AWS::Serverless::Function's DynamoDB events, in
// template order. Stream must be !GetAtt <Table>.StreamArn; anything else is
// an error rather than a stream the local stack silently never reads.
func (t *Template) StreamSources() ([]StreamSource, error) {
	var out []StreamSource
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
			if typ := mappingValue(ev, "Type"); typ == nil || typ.Value != "DynamoDB" {
				continue
			}
			stream := mappingValue(mappingValue(ev, "Properties"), "Stream")
			table, ok := strings.CutSuffix(getAttTarget(stream), ".StreamArn")
			if !ok || table == "" {
				return nil, fmt.Errorf("function %s event %s: Stream must be !GetAtt <Table>.StreamArn", res.logicalID, name)
			}
			out = append(out, StreamSource{Function: res.logicalID, Table: table})
		}
	}
	return out, nil
}

// getAttTarget is "<Resource>.<Attribute>" of a !GetAtt node in short form
// (scalar "X.Y" or sequence [X, Y]) or long form (Fn::GetAtt), "" otherwise.
func getAttTarget(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	if n.Kind == yaml.MappingNode && len(n.Content) == 2 && n.Content[0].Value == "Fn::GetAtt" {
		n = n.Content[1]
	} else if n.Tag != "!GetAtt" {
		return ""
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value
	case yaml.SequenceNode:
		if len(n.Content) == 2 {
			return n.Content[0].Value + "." + n.Content[1].Value
		}
	}
	return ""
}
