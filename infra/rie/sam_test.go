package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLocalTemplate(t *testing.T) {
	tmpl, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := localTemplate(tmpl, "/repo")
	if err != nil {
		t.Fatal(err)
	}
	globals, _, _ := strings.Cut(string(got)[strings.Index(string(got), "\nGlobals:\n"):], "\nResources:\n")
	for _, v := range samLocalVars {
		if !strings.Contains(globals, "\n        "+v+": \"\"\n") {
			t.Errorf("Globals does not declare %s:\n%s", v, globals)
		}
	}
	if strings.Count(string(got), "Location: /repo/infra/routing/template.yaml") != 1 {
		t.Errorf("the nested routing stack's Location is not made absolute")
	}
	if len(got) <= len(tmpl) || !strings.HasSuffix(string(got), string(tmpl[len(tmpl)-200:])) {
		t.Errorf("the rest of the template is not kept")
	}

	cases := []struct {
		name, in string
		ok       bool
	}{
		{"no Globals", "Resources:\n  A:\n    Type: X\n", false},
		{"Globals without variables", "Globals:\n  Function:\n    Timeout: 3\nResources: {}\n", false},
		{"variables", "Globals:\n  Function:\n    Environment:\n      Variables:\n        A: b\n", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := localTemplate([]byte(c.in), "/repo")
			if (err == nil) != c.ok {
				t.Fatalf("err = %v, want ok %v", err, c.ok)
			}
			if c.ok && !strings.Contains(string(out), "      Variables:\n        # Local runs only") {
				t.Errorf("variables not inserted first: %s", out)
			}
		})
	}
}

func TestNestedLocation(t *testing.T) {
	cases := []struct{ in, want string }{
		{"      Location: infra/routing/template.yaml", "      Location: " + filepath.Join("/repo", "infra/routing/template.yaml")},
		{"      Location: !Sub https://x/${A}.yaml", "      Location: !Sub https://x/${A}.yaml"},
		{"      Location: s3://bucket/t.json", "      Location: s3://bucket/t.json"},
	}
	for _, c := range cases {
		out, err := localTemplate([]byte(c.in+"\nGlobals:\n  Function:\n    Environment:\n      Variables:\n"), "/repo")
		if err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(string(out), "\n"); first != c.want {
			t.Errorf("%q → %q, want %q", c.in, first, c.want)
		}
	}
}
