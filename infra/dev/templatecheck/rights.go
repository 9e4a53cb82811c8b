package template

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Rights is what one function may do, by logical id of the resources.
type Rights struct {
	Reads  []string // tables it may read (GetItem, Query, BatchGetItem)
	Writes []string // tables it may write (PutItem, UpdateItem, DeleteItem, ...)
	// Checks are tables it may only name in a transaction's condition check
	// (ConditionCheckItem), which changes nothing: update_pulse checks the task.
	Checks    []string
	Publishes bool     // events:PutEvents on the bus
	Email     bool     // ses:SendEmail (notify only)
	Invokes   []string // functions it may invoke (the mcp front: the tool functions)
	Secrets   bool     // ssm:GetParameter on the signing key / Slack token parameters
	Stream    string   // table whose stream it reads
	Queues    []string // queues it may send to (dead letters)
	// MCP functions authenticate bearer tokens: they must read the directory.
	MCP bool
}

// dataServices are the services whose actions touch data: a bare "*"
// resource is never acceptable on them.
var dataServices = []string{"dynamodb", "ssm", "ses", "sesv2", "lambda", "events", "sqs", "sns", "s3", "kms", "secretsmanager", "logs"}

// dynamodbWrites are the DynamoDB actions that change data or tables.
var dynamodbWrites = []string{
	"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "ConditionCheckItem",
	"PartiQLInsert", "PartiQLUpdate", "PartiQLDelete", "CreateTable", "UpdateTable",
	"DeleteTable", "UpdateTimeToLive", "RestoreTableToPointInTime", "ImportTable",
	"DeleteBackup", "CreateBackup", "TagResource", "UntagResource",
}

// dynamodbReads are the DynamoDB item reads a function may get on a table it reads.
var dynamodbReads = []string{"GetItem", "BatchGetItem", "Query"}

// streamReads are the stream actions of a DynamoDB stream source.
var streamReads = []string{"DescribeStream", "GetRecords", "GetShardIterator", "ListStreams"}

// Check compares every function's statements with its rights and returns
// the violations, one line each; none means the template is least-privilege.
func Check(t *Template, rights map[string]Rights) []string {
	var bad []string
	report := func(fn, format string, a ...any) {
		bad = append(bad, fn+": "+fmt.Sprintf(format, a...))
	}
	for _, fn := range t.Functions() {
		want, ok := rights[fn]
		if !ok {
			report(fn, "function has no entry in the rights table: say what it may do")
			continue
		}
		stmts, err := t.FunctionStatements(fn)
		if err != nil {
			report(fn, "%v", err)
			continue
		}
		readsDirectory := false
		for _, s := range stmts {
			if s.Problem != "" {
				report(fn, "%s", s.Problem)
				continue
			}
			if s.Effect != "Allow" {
				continue
			}
			for _, a := range s.Actions {
				service, _, _ := strings.Cut(a, ":")
				if a == "*" || service == "*" {
					report(fn, "statement %q grants every action (%s)", s.Sid, a)
					continue
				}
				for _, r := range s.Resources {
					id, typ, text := t.ResourceTarget(r)
					if text == "*" && slices.Contains(dataServices, strings.ToLower(service)) {
						report(fn, "statement %q grants %s on resource \"*\"", s.Sid, a)
						continue
					}
					switch strings.ToLower(service) {
					case "dynamodb":
						if msg := checkDynamoDB(a, id, typ, text, want); msg != "" {
							report(fn, "statement %q: %s", s.Sid, msg)
						}
						if id == "DirectoryTable" && ActionMatches(a, "dynamodb:GetItem") {
							readsDirectory = true
						}
					case "ses", "sesv2":
						if !want.Email {
							report(fn, "statement %q grants %s: only notify sends email", s.Sid, a)
						}
					case "lambda":
						if ActionMatches(a, "lambda:InvokeFunction") && !slices.Contains(want.Invokes, id) {
							report(fn, "statement %q grants %s on %s: only mcp invokes, and only the tool functions", s.Sid, a, text)
						} else if !ActionMatches(a, "lambda:InvokeFunction") {
							report(fn, "statement %q grants %s", s.Sid, a)
						}
					case "events":
						if !want.Publishes || !ActionMatches(a, "events:PutEvents") || typ != "AWS::Events::EventBus" {
							report(fn, "statement %q grants %s on %s: only publishers get PutEvents on the bus", s.Sid, a, text)
						}
					case "ssm":
						if !want.Secrets || !ActionMatches(a, "ssm:GetParameter") || strings.HasPrefix(a, "ssm:*") {
							report(fn, "statement %q grants %s: only web, notify and slack read the signing key / Slack secrets", s.Sid, a)
						}
					case "sqs":
						if !ActionMatches(a, "sqs:SendMessage") || !slices.Contains(want.Queues, id) || strings.Contains(a, "*") {
							report(fn, "statement %q grants %s on %s", s.Sid, a, text)
						}
					case "logs":
						if strings.Contains(a, "*") {
							report(fn, "statement %q grants %s", s.Sid, a)
						}
					default:
						report(fn, "statement %q grants %s, a service no function needs", s.Sid, a)
					}
				}
			}
		}
		if want.MCP && !readsDirectory {
			report(fn, "an MCP function must read the directory table (token lookup)")
		}
	}
	for fn := range rights {
		if r, ok := t.Resources[fn]; !ok || r.Type != "AWS::Serverless::Function" {
			report(fn, "in the rights table but not a function of the template")
		}
	}
	sort.Strings(bad)
	return bad
}

// checkDynamoDB checks one DynamoDB action on one resource against the rights.
func checkDynamoDB(action, id, typ, text string, want Rights) string {
	if typ != "AWS::DynamoDB::Table" {
		return fmt.Sprintf("%s on %s, which is not one of the tables", action, text)
	}
	isWrite, isRead, isStream := false, false, false
	for _, w := range dynamodbWrites {
		isWrite = isWrite || ActionMatches(action, "dynamodb:"+w)
	}
	for _, r := range dynamodbReads {
		isRead = isRead || ActionMatches(action, "dynamodb:"+r)
	}
	for _, r := range streamReads {
		isStream = isStream || ActionMatches(action, "dynamodb:"+r)
	}
	checkOnly := ActionMatches(action, "dynamodb:ConditionCheckItem")
	for _, w := range dynamodbWrites {
		checkOnly = checkOnly && (w == "ConditionCheckItem" || !ActionMatches(action, "dynamodb:"+w))
	}
	onStream := strings.HasSuffix(text, "StreamArn") || strings.Contains(text, "/stream/")
	switch {
	case isWrite && checkOnly && slices.Contains(want.Checks, id) && !onStream:
	case isWrite && !slices.Contains(want.Writes, id):
		return fmt.Sprintf("%s on %s: this function does not write %s", action, text, id)
	case isWrite && onStream:
		return fmt.Sprintf("%s on a stream", action)
	case isStream && onStream && want.Stream != id:
		return fmt.Sprintf("%s on the stream of %s: this function does not read it", action, id)
	case isStream && !onStream && !isRead:
		return fmt.Sprintf("%s on %s", action, text)
	case isRead && !slices.Contains(want.Reads, id) && !slices.Contains(want.Writes, id):
		return fmt.Sprintf("%s on %s: this function does not read %s", action, text, id)
	case !isWrite && !isRead && !isStream:
		return fmt.Sprintf("%s is neither an item read nor a write this project uses", action)
	}
	return ""
}
