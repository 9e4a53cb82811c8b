package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The documentation this command writes into, and the pages beside it, link
// only to files that exist and to headings those files have.

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*$`)
	codeRE    = regexp.MustCompile("`[^`]*`")
)

// anchorOf is GitHub's anchor of a heading: lower case, punctuation but
// hyphens and underscores dropped, spaces made hyphens.
func anchorOf(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// prose returns a markdown file's lines outside fenced code blocks.
func prose(doc string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, line)
		}
	}
	return out
}

// anchors are the anchors of a markdown file's headings (a repeated heading
// gets -1, -2, … as on GitHub).
func anchors(doc string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, line := range prose(doc) {
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a := anchorOf(m[1])
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func TestAnchorOf(t *testing.T) {
	for heading, want := range map[string]string{
		"Pull wake-ups (no public URL needed)":                 "pull-wake-ups-no-public-url-needed",
		"The local stack at a team's scale":                    "the-local-stack-at-a-teams-scale",
		"Steps: request_step and approval links":               "steps-request_step-and-approval-links",
		"OAuth access tokens hold for /mcp only":               "oauth-access-tokens-hold-for-mcp-only",
		"`read_room`":                                          "read_room",
		"claude.ai, ChatGPT, Claude Desktop: OAuth connectors": "claudeai-chatgpt-claude-desktop-oauth-connectors",
	} {
		if got := anchorOf(heading); got != want {
			t.Errorf("anchorOf(%q) = %q, want %q", heading, got, want)
		}
	}
}

func TestLinksResolve(t *testing.T) {
	root := "../../.."
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"))
	read := map[string]string{}
	load := func(path string) (string, error) {
		if doc, ok := read[path]; ok {
			return doc, nil
		}
		b, err := os.ReadFile(path)
		read[path] = string(b)
		return string(b), err
	}
	links := 0
	for _, page := range pages {
		doc, err := load(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range prose(doc) {
			for _, m := range linkRE.FindAllStringSubmatch(codeRE.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				file, anchor, _ := strings.Cut(target, "#")
				path := page
				if file != "" {
					path = filepath.Join(filepath.Dir(page), file)
				}
				rel, _ := filepath.Rel(root, page)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %s: no such file", rel, target)
					continue
				}
				if anchor == "" || !strings.HasSuffix(path, ".md") {
					continue
				}
				targetDoc, err := load(path)
				if err != nil {
					t.Fatal(err)
				}
				if !anchors(targetDoc)[anchor] {
					t.Errorf("%s: link %s: no heading with that anchor", rel, target)
				}
			}
		}
	}
	if links < 50 {
		t.Errorf("only %d relative links found: the link pattern is broken", links)
	}
}
