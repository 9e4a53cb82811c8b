package cfn

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
	err := t.functionEvents("DynamoDB", func(function, _ string, props *yaml.Node) error {
		table, ok := strings.CutSuffix(getAttTarget(mappingValue(props, "Stream")), ".StreamArn")
		if !ok || table == "" {
			return fmt.Errorf("its Stream must be !GetAtt <Table>.StreamArn")
		}
		out = append(out, StreamSource{Function: function, Table: table})
		return nil
	})
	return out, err
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
