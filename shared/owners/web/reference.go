package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/useprickle/prickle/shared/mcp/catalog"
)

// The tool reference (/docs/reference/mcp-tools) is generated from the
// catalog that tools/list serves: ToolDocs is built once, at start, from
// catalog.All() and each tool's MCPTool(), so the page cannot drift from
// what agents are told (a test parses the page back and compares).

// ToolDoc is one tool as the reference shows it.
type ToolDoc struct {
	Name, Title, Description string
	Writes                   bool
	Fields                   []FieldDoc
	// InputSchema, OutputSchema and Example are indented JSON.
	InputSchema, OutputSchema, Example string
	// RunTokenNote says how the tool answers a run token, when that differs.
	RunTokenNote string
	// PauseNote says what a woken run does while its owner decides (request_step).
	PauseNote string
}

// FieldDoc is one row of a tool's input table.
type FieldDoc struct {
	Name        string
	Required    bool
	Type        string
	Constraints []string // sentences: "Minimum characters: 1.", "One of: a, b.", "Default: \"x\"."
}

var toolDocs = mustToolDocs()

// ToolDocs returns the reference's data model, in the catalog's order.
func ToolDocs() []ToolDoc { return slices.Clone(toolDocs) }

func mustToolDocs() []ToolDoc {
	var docs []ToolDoc
	for _, t := range catalog.All() {
		d, err := toolDoc(t)
		if err != nil {
			panic(fmt.Sprintf("web: tool reference of %s: %v", t.Name, err))
		}
		docs = append(docs, d)
	}
	return docs
}

// toolDoc documents a tool from what tools/list says about it.
func toolDoc(t *catalog.Tool) (ToolDoc, error) {
	m := t.MCPTool()
	in := m.RawInputSchema
	out := m.RawOutputSchema
	d := ToolDoc{Name: m.Name, Title: m.Annotations.Title, Description: m.Description,
		Writes: m.Annotations.ReadOnlyHint != nil && !*m.Annotations.ReadOnlyHint}
	if t.Name == catalog.PermissionTool {
		d.RunTokenNote, d.PauseNote = catalog.PermissionLayerNote, catalog.PauseNote
	}
	var err error
	if d.InputSchema, err = indent(in); err != nil {
		return d, err
	}
	if d.OutputSchema, err = indent(out); err != nil {
		return d, err
	}
	if d.Example, err = indent(t.Example); err != nil {
		return d, err
	}
	d.Fields, err = fields(in)
	return d, err
}

func indent(raw json.RawMessage) (string, error) {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return "", err
	}
	return b.String(), nil
}

// schema is the part of a JSON Schema the input table reads.
type schema struct {
	Type       any                        `json:"type"`
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
	Enum       []any                      `json:"enum"`
	Default    json.RawMessage            `json:"default"`
	MinLength  *int                       `json:"minLength"`
	MaxLength  *int                       `json:"maxLength"`
	MinItems   *int                       `json:"minItems"`
	MaxItems   *int                       `json:"maxItems"`
	Minimum    *float64                   `json:"minimum"`
	Maximum    *float64                   `json:"maximum"`
	Pattern    string                     `json:"pattern"`
	Format     string                     `json:"format"`
	Items      *schema                    `json:"items"`
	AnyOf      []schema                   `json:"anyOf"`
}

// fields lists the top-level input properties in the schema's own order.
func fields(raw json.RawMessage) ([]FieldDoc, error) {
	var s schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	var props struct {
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &props); err != nil {
		return nil, err
	}
	names, err := orderedKeys(props.Properties)
	if err != nil {
		return nil, err
	}
	var out []FieldDoc
	for _, name := range names {
		var p schema
		if err := json.Unmarshal(s.Properties[name], &p); err != nil {
			return nil, err
		}
		out = append(out, FieldDoc{Name: name, Required: slices.Contains(s.Required, name), Type: typeOf(p), Constraints: constraints(p)})
	}
	return out, nil
}

// orderedKeys returns an object's keys in document order.
func orderedKeys(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

func typeOf(s schema) string {
	if len(s.AnyOf) > 0 {
		var ts []string
		for _, a := range s.AnyOf {
			ts = append(ts, typeOf(a))
		}
		return strings.Join(ts, " or ")
	}
	switch t := s.Type.(type) {
	case string:
		if t == "array" && s.Items != nil && s.Items.Type != nil {
			return "array of " + typeOf(*s.Items)
		}
		return t
	case []any:
		var ts []string
		for _, x := range t {
			ts = append(ts, fmt.Sprint(x))
		}
		return strings.Join(ts, " or ")
	}
	return "any"
}

func num(f float64) string { return fmt.Sprint(f) }

func constraints(s schema) []string {
	var c []string
	if s.MinLength != nil {
		c = append(c, fmt.Sprintf("Minimum characters: %d.", *s.MinLength))
	}
	if s.MaxLength != nil {
		c = append(c, fmt.Sprintf("Maximum characters: %d.", *s.MaxLength))
	}
	if s.MinItems != nil {
		c = append(c, fmt.Sprintf("Minimum items: %d.", *s.MinItems))
	}
	if s.MaxItems != nil {
		c = append(c, fmt.Sprintf("Maximum items: %d.", *s.MaxItems))
	}
	if s.Minimum != nil {
		c = append(c, "Minimum: "+num(*s.Minimum)+".")
	}
	if s.Maximum != nil {
		c = append(c, "Maximum: "+num(*s.Maximum)+".")
	}
	if s.Format != "" {
		c = append(c, "Format: "+s.Format+".")
	}
	if s.Pattern != "" {
		c = append(c, "Pattern: "+s.Pattern)
	}
	if len(s.Enum) > 0 {
		c = append(c, "One of: "+joinAny(s.Enum)+".")
	}
	if s.Items != nil && len(s.Items.Enum) > 0 {
		c = append(c, "Each item one of: "+joinAny(s.Items.Enum)+".")
	}
	if s.Items != nil && s.Items.Properties != nil {
		var req []string
		req = append(req, s.Items.Required...)
		if len(req) > 0 {
			c = append(c, "Each item is an object with "+strings.Join(req, ", ")+" (see the full schema).")
		}
	}
	if s.Properties != nil && len(s.Required) > 0 {
		c = append(c, "An object with "+strings.Join(s.Required, ", ")+" (see the full schema).")
	}
	if len(s.Default) > 0 {
		c = append(c, "Default: "+string(s.Default)+".")
	}
	return c
}

func joinAny(xs []any) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprint(x)
	}
	return strings.Join(out, ", ")
}

type referenceView struct {
	chrome
	Available int
	Tools     []ToolDoc
	Selected  string
	Names     []string
}

// reference is GET /docs/reference/mcp-tools[?tool=name]: public, no sign-in.
func (h *Handler) reference(w http.ResponseWriter, r *http.Request) {
	v := &referenceView{chrome: chrome{Title: "MCP tool reference", Public: true}, Available: len(toolDocs)}
	if s, ok := h.session(r); ok {
		v.Me, v.CSRF = s.Owner, h.keys.FormToken(s)
	}
	for _, d := range toolDocs {
		v.Names = append(v.Names, d.Name)
	}
	name := strings.TrimSpace(r.URL.Query().Get("tool"))
	status := http.StatusOK
	for _, d := range toolDocs {
		if name == "" || d.Name == name {
			v.Tools = append(v.Tools, d)
		}
	}
	if name != "" {
		v.Selected = name
		v.Title = name + " · MCP tool reference"
		if len(v.Tools) == 0 {
			status = http.StatusNotFound
			infoOf(r).outcome = "not_found"
		}
	}
	h.render(w, r, status, "reference.html", v)
}
