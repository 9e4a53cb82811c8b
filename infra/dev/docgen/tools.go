package main

import (
	"fmt"
	"strings"

	"github.com/useprickle/prickle/shared/mcp/catalog"
	"github.com/useprickle/prickle/shared/owners/web"
)

// WhoMayCall is who may call each tool, as the team service checks it
// (shared/domain/task's roles, shared/team's membership checks). The
// catalog does not hold it; a test fails when a tool of the catalog has no
// entry here, or an entry names no tool.
var WhoMayCall = map[string]string{
	"read_room":       "project member",
	"get_task":        "project member",
	"hand_off_task":   "project member",
	"accept_task":     "assignee",
	"decline_task":    "assignee",
	"save_checkpoint": "assignee",
	"request_step":    "a woken run of the assignee (run token)",
	"return_result":   "assignee",
	"review_result":   "requester",
	"cancel_task":     "requester",
	"update_pulse":    "project member",
}

// cell makes text safe inside a markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// firstSentence is a description's first sentence.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Table is README's tool table: one row per tool of the catalog, in its order.
func Table() string {
	var b strings.Builder
	b.WriteString("| tool | writes | who may call | what it does |\n|---|---|---|---|\n")
	for _, t := range catalog.All() {
		fmt.Fprintf(&b, "| [`%s`](docs/tools.md#%s) | %s | %s | %s |\n",
			t.Name, t.Name, yesNo(t.Writes), WhoMayCall[t.Name], cell(firstSentence(t.Description)))
	}
	return b.String()
}

// constraints joins a field's constraint sentences, its pattern as code.
func constraints(cs []string) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		if p, ok := strings.CutPrefix(c, "Pattern: "); ok {
			c = "Pattern: `" + p + "`."
		}
		out[i] = c
	}
	return strings.Join(out, " ")
}

// hints are a tool's MCP annotations, as a sentence.
func hints(t *catalog.Tool) string {
	var h []string
	if t.Writes {
		h = append(h, "writes")
	} else {
		h = append(h, "reads only")
	}
	if t.Destructive {
		h = append(h, "destructive")
	}
	if t.Idempotent {
		h = append(h, "idempotent")
	}
	return strings.Join(h, ", ")
}

// Reference is docs/tools.md's per-tool reference: each tool's description,
// who may call it, its annotations and its input fields, from the same data
// model as the /docs/reference/mcp-tools page.
func Reference() string {
	docs := map[string]web.ToolDoc{}
	for _, d := range web.ToolDocs() {
		docs[d.Name] = d
	}
	var b strings.Builder
	for _, t := range catalog.All() {
		d := docs[t.Name]
		fmt.Fprintf(&b, "\n### %s\n\n", t.Name)
		fmt.Fprintf(&b, "**%s.** Who may call: %s. Annotations: %s.\n\n", d.Title, WhoMayCall[t.Name], hints(t))
		for _, p := range strings.Split(d.Description, "\n\n") {
			fmt.Fprintf(&b, "%s\n\n", p)
		}
		for _, note := range []string{d.RunTokenNote, d.PauseNote} {
			if note != "" {
				fmt.Fprintf(&b, "%s\n\n", note)
			}
		}
		b.WriteString("| argument | type | required | constraints |\n|---|---|---|---|\n")
		for _, f := range d.Fields {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Name, cell(f.Type), yesNo(f.Required), cell(constraints(f.Constraints)))
		}
		fmt.Fprintf(&b, "\nSchemas: [input](../shared/mcp/catalog/schemas/%[1]s.input.json), [output](../shared/mcp/catalog/schemas/%[1]s.output.json), [example](../shared/mcp/catalog/schemas/%[1]s.example.json); on a running stack, `/docs/reference/mcp-tools?tool=%[1]s`.\n", t.Name)
	}
	return b.String()
}
