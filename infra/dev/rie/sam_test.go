package main

import (
	"os"
	"strings"
	"testing"
)

func TestLocalTemplate(t *testing.T) {
	tmpl, err := os.ReadFile("../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := localTemplate(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	globals, _, _ := strings.Cut(string(got)[strings.Index(string(got), "\nGlobals:\n"):], "\nResources:\n")
	for _, v := range samLocalVars {
		if !strings.Contains(globals, "\n        "+v+": \"\"\n") {
			t.Errorf("Globals does not declare %s:\n%s", v, globals)
		}
	}
	for _, gone := range []string{"\n    Condition: IsRestApi\n", "\n    Condition: RestWithDomain\n", "\n  CoreApi:\n", "\n  GetTaskApi:\n", "Location: infra/"} {
		if strings.Contains(string(got), gone) {
			t.Errorf("the local template still has %q", gone)
		}
	}
	for _, kept := range []string{"\n  McpFunction:\n", "\n  GetTaskFunction:\n", "\n  HttpApi:\n", "\n  TasksTable:\n", "\nOutputs:\n"} {
		if !strings.Contains(string(got), kept) {
			t.Errorf("the local template lost %q", kept)
		}
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
			out, err := localTemplate([]byte(c.in))
			if (err == nil) != c.ok {
				t.Fatalf("err = %v, want ok %v", err, c.ok)
			}
			if c.ok && !strings.Contains(string(out), "      Variables:\n        # Local runs only") {
				t.Errorf("variables not inserted first: %s", out)
			}
		})
	}
}

func TestWithoutREST(t *testing.T) {
	in := "Conditions:\n  IsRestApi: !Equals [a, b]\nResources:\n  # the core API\n  CoreApi:\n    Type: AWS::Serverless::Api\n    Condition: IsRestApi\n    Properties:\n      A: 1\n" +
		"  Fn:\n    Type: AWS::Serverless::Function\n    Properties:\n      Condition: IsRestApi\n" +
		"  HttpApi:\n    Type: AWS::Serverless::HttpApi\n    Condition: IsHttpApi\n" +
		"  Domain:\n    Type: X\n    Condition: RestWithDomain\nOutputs:\n  CoreUrl:\n    Condition: IsRestApi\n    Value: x\n  HttpUrl:\n    Value: y\n"
	want := "Conditions:\n  IsRestApi: !Equals [a, b]\nResources:\n  # the core API\n" +
		"  Fn:\n    Type: AWS::Serverless::Function\n    Properties:\n      Condition: IsRestApi\n" +
		"  HttpApi:\n    Type: AWS::Serverless::HttpApi\n    Condition: IsHttpApi\n" +
		"Outputs:\n  HttpUrl:\n    Value: y\n"
	if got := string(withoutREST([]byte(in))); got != want {
		t.Errorf("withoutREST:\n%s\nwant:\n%s", got, want)
	}
}
