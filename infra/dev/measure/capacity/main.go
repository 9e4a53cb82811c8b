// Command capacity measures the DynamoDB capacity each of the eleven tools
// consumes per call, and prints the markdown table of docs/measurements.md,
// "Cost per million tool calls". It builds fresh tables from template.yaml on the
// emulator, seeds website-v2, then makes every tool call through the whole
// MCP endpoint (endpoint.InProcess, real bearer tokens, so authentication
// is counted) while a recorder in the DynamoDB client's middleware bills
// each request as DynamoDB would (recorder.go, size.go).
//
//	infra/dev/emulator/with-emulator.sh go run ./infra/dev/measure/capacity [-n 20]
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/infra/cmd/prickle-admin/dynamo"
	"github.com/useprickle/prickle/shared/aws/cfn"
	"github.com/useprickle/prickle/shared/aws/store"
	"github.com/useprickle/prickle/shared/aws/store/storetest"
	"github.com/useprickle/prickle/shared/domain/event"
	"github.com/useprickle/prickle/shared/jobs/taskevents"
	"github.com/useprickle/prickle/shared/mcp/catalog"
	"github.com/useprickle/prickle/shared/mcp/endpoint"
	"github.com/useprickle/prickle/shared/team"
	"github.com/useprickle/prickle/shared/team/admin"
)

// On-demand prices, us-east-1, standard table class
// (https://aws.amazon.com/dynamodb/pricing/on-demand/).
const (
	dollarsPerMillionRRU = 0.125
	dollarsPerMillionWRU = 0.625
)

func main() {
	rounds := flag.Int("n", 20, "rounds of the scenario (each calls every tool at least once)")
	items := flag.Bool("items", false, "also print the byte breakdown of the first round's task item after return_result and review_result")
	flag.Parse()
	// task-events logs every batch; its failures come back as errors.
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := run(context.Background(), *rounds, *items); err != nil {
		fmt.Fprintln(os.Stderr, "capacity:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, rounds int, items bool) error {
	ep := os.Getenv("PRICKLE_DYNAMODB_ENDPOINT")
	if ep == "" {
		return errors.New("PRICKLE_DYNAMODB_ENDPOINT is not set; run: infra/dev/emulator/with-emulator.sh go run ./infra/dev/measure/capacity")
	}
	base, err := dynamo.Client(ctx, ep)
	if err != nil {
		return err
	}
	tpl, err := cfn.LoadTemplate(templatePath())
	if err != nil {
		return err
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	specs, err := tpl.Tables(map[string]string{"Stage": "measure-" + hex.EncodeToString(suffix)})
	if err != nil {
		return err
	}
	if err := cfn.CreateTables(ctx, base, specs); err != nil {
		return err
	}
	defer func() {
		for _, s := range specs {
			_, _ = base.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(s.Name())})
		}
	}()
	names := map[string]string{}
	for _, s := range specs {
		names[s.LogicalID] = s.Name()
	}

	rec := NewRecorder(base, specs)
	recorded := dynamodb.New(base.Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(slices.Clone(o.APIOptions), rec.Register)
	})
	st := store.New(recorded, store.Tables{Tasks: names["TasksTable"], Steps: names["StepsTable"], Pulse: names["PulseTable"], Directory: names["DirectoryTable"], Wakeups: names["WakeupsTable"]})
	adm, svc := admin.New(st), team.New(st)
	if err := seed(ctx, adm, svc); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	tokens := map[string]string{}
	for _, a := range []string{writer, builder, reviewer} {
		if tokens[a], err = adm.MintAgentToken(ctx, a); err != nil {
			return err
		}
	}
	h, err := endpoint.InProcess(endpoint.Config{Service: svc, Tokens: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	s := &session{mcp: h, rec: rec, tokens: tokens,
		stream: storetest.NewStreamReader(base, storetest.NewStreamsClient(ep), names["TasksTable"]), filer: taskevents.New(st, discard{})}
	if items {
		s.show = func(tool, id string) {
			if tool != "return_result" && tool != "review_result" {
				return
			}
			out, err := base.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(names["TasksTable"]), ConsistentRead: aws.Bool(true),
				Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "TASK#" + id}, "sk": &types.AttributeValueMemberS{Value: "TASK"}}})
			if err != nil {
				fmt.Fprintln(os.Stderr, "capacity: item breakdown:", err)
				return
			}
			breakdown(os.Stdout, "task item after "+tool, out.Item)
		}
	}
	if err := s.file(); err != nil { // the seed's lines, filed unrecorded
		return fmt.Errorf("seed: the tasks stream: %w", err)
	}
	for i := range rounds {
		if err := s.round(ctx, adm, i+1); err != nil {
			return fmt.Errorf("round %d: %w", i+1, err)
		}
	}
	report(os.Stdout, rec.Requests(), func(table string) string {
		for logical, name := range names {
			if name == table {
				return strings.ToLower(strings.TrimSuffix(logical, "Table"))
			}
		}
		return table
	})
	return nil
}

// discard stands in for the event bus: what task-events republishes is not measured.
type discard struct{}

func (discard) Publish(context.Context, ...event.Event) error { return nil }

// templatePath finds template.yaml at the module root, at or above the working directory.
func templatePath() string {
	dir, _ := os.Getwd()
	for {
		p := filepath.Join(dir, "template.yaml")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "template.yaml"
		}
		dir = parent
	}
}

// toolStats sums one tool's calls.
type toolStats struct {
	calls      int
	ops        map[string]int
	rru, wru   float64
	gsiWRU     float64
	minR, maxR float64
	failed     int
	parts      map[string]*part // op table[/index] → units and bytes
}

type part struct {
	n     int
	units float64
	bytes int
}

func report(w io.Writer, reqs []request, short func(string) string) {
	stats := map[string]*toolStats{}
	perCall := map[int]float64{}
	callTool := map[int]string{}
	for _, r := range reqs {
		s := stats[r.label]
		if s == nil {
			s = &toolStats{ops: map[string]int{}, parts: map[string]*part{}}
			stats[r.label] = s
		}
		callTool[r.call] = r.label
		s.ops[r.op]++
		if r.failed {
			s.failed++
		}
		for _, c := range r.charges {
			where := short(c.table)
			if c.index != "" {
				where += "/" + c.index
			}
			kind := "read"
			if c.write {
				kind = "write"
				s.wru += c.units
				if c.index != "" {
					s.gsiWRU += c.units
				}
			} else {
				s.rru += c.units
				perCall[r.call] += c.units
			}
			key := fmt.Sprintf("%s %s %s", r.op, kind, where)
			p := s.parts[key]
			if p == nil {
				p = &part{}
				s.parts[key] = p
			}
			p.n++
			p.units += c.units
			p.bytes += c.bytes
		}
	}
	for call, tool := range callTool {
		s := stats[tool]
		s.calls++
		r := perCall[call]
		if s.calls == 1 || r < s.minR {
			s.minR = r
		}
		s.maxR = max(s.maxR, r)
	}

	fmt.Fprintln(w, "| tool | DynamoDB requests per call | RRU per call | WRU per call (table + GSI) | DynamoDB $/M calls |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|")
	for _, t := range catalog.All() {
		s := stats[t.Name]
		if s == nil {
			continue
		}
		n := float64(s.calls)
		var ops []string
		for _, op := range slices.Sorted(func(yield func(string) bool) {
			for k := range s.ops {
				if !yield(k) {
					return
				}
			}
		}) {
			ops = append(ops, fmt.Sprintf("%s %s", trim(float64(s.ops[op])/n), op))
		}
		rru := trim(s.rru / n)
		if s.minR != s.maxR {
			rru += fmt.Sprintf(" (%s–%s)", trim(s.minR), trim(s.maxR))
		}
		wru := trim(s.wru / n)
		if s.wru > 0 {
			wru += fmt.Sprintf(" (%s + %s)", trim((s.wru-s.gsiWRU)/n), trim(s.gsiWRU/n))
		}
		cost := (s.rru*dollarsPerMillionRRU + s.wru*dollarsPerMillionWRU) / n
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.2f |\n", t.Name, strings.Join(ops, ", "), rru, wru, cost)
	}

	fmt.Fprintln(w, "\nWhere the units go, per call (units; mean billed bytes per charge):")
	for _, t := range catalog.All() {
		s := stats[t.Name]
		if s == nil {
			continue
		}
		n := float64(s.calls)
		var parts []string
		for _, key := range slices.Sorted(func(yield func(string) bool) {
			for k := range s.parts {
				if !yield(k) {
					return
				}
			}
		}) {
			p := s.parts[key]
			parts = append(parts, fmt.Sprintf("%s %s×: %s u, %d B", key, trim(float64(p.n)/n), trim(p.units/n), p.bytes/p.n))
		}
		failed := ""
		if s.failed > 0 {
			failed = fmt.Sprintf(" [%d failed requests]", s.failed)
		}
		fmt.Fprintf(w, "- %s (%d calls)%s: %s\n", t.Name, s.calls, failed, strings.Join(parts, "; "))
	}
}

// trim prints a number with at most two decimals and no trailing zeros.
func trim(f float64) string {
	s := strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}
