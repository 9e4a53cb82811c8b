package house

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const root = "../../.."

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		f    TrackedFile
		bad  bool
	}{
		{"source", TrackedFile{Path: "a.go", Mode: "100644", Size: 10, Head: []byte("package a")}, false},
		{"a script", TrackedFile{Path: "x.sh", Mode: "100755", Size: 10, Head: []byte("#!/bin/sh")}, false},
		{"a Linux binary", TrackedFile{Path: "rie", Mode: "100755", Size: 10, Head: []byte("\x7fELF\x02")}, true},
		{"a Linux binary without the x bit", TrackedFile{Path: "rie", Mode: "100644", Size: 10, Head: []byte("\x7fELF\x02")}, true},
		{"a macOS binary", TrackedFile{Path: "local", Mode: "100755", Size: 10, Head: []byte{0xcf, 0xfa, 0xed, 0xfe}}, true},
		{"a Windows binary", TrackedFile{Path: "admin.exe", Mode: "100644", Size: 10, Head: []byte("MZ\x90")}, true},
		{"executable data", TrackedFile{Path: "data.bin", Mode: "100755", Size: 10, Head: []byte{1, 2, 3}}, true},
		{"over 1 MB", TrackedFile{Path: "dump.json", Mode: "100644", Size: MaxTrackedBytes + 1, Head: []byte("{")}, true},
		{"the picture", TrackedFile{Path: "docs/team-pulse.png", Mode: "100644", Size: MaxTrackedBytes + 1, Head: []byte("\x89PNG")}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := Check(c.f); (err != nil) != c.bad {
				t.Errorf("Check = %v, want bad=%v", err, c.bad)
			}
		})
	}
}

// TestNoBuildOutputInGit reads every file git tracks.
func TestNoBuildOutputInGit(t *testing.T) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-s", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	n := 0
	for _, rec := range bytes.Split(bytes.TrimRight(out, "\x00"), []byte{0}) {
		meta, path, _ := strings.Cut(string(rec), "\t")
		mode := strings.Fields(meta)[0]
		if mode == "120000" || mode == "160000" { // symlinks and submodules have no content here
			continue
		}
		f, err := os.Open(filepath.Join(root, path))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		head := make([]byte, 8)
		k, _ := io.ReadFull(f, head)
		f.Close()
		if err := Check(TrackedFile{Path: path, Mode: mode, Size: st.Size(), Head: head[:k]}); err != nil {
			t.Error(err)
		}
		n++
	}
	if n < 100 {
		t.Fatalf("read %d tracked files; expected the whole repository", n)
	}
}

func TestCheckLength(t *testing.T) {
	for _, c := range []struct {
		name  string
		path  string
		lines int
		bad   bool
	}{
		{"a short file", "shared/team/io.go", 120, false},
		{"at the limit", "shared/team/io.go", MaxFileLines, false},
		{"over the limit", "shared/team/io.go", MaxFileLines + 1, true},
		{"a function over", "functions/web/main.go", MaxFileLines + 1, true},
		{"a command over", "infra/cmd/prickle-runner/runner/codex.go", 533, true},
		{"a test over", "shared/team/steps_test.go", 900, false},
		{"not Go", "shared/owners/web/templates/room.html", 900, false},
		{"outside the three folders", "events/x.go", 900, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := CheckLength(c.path, c.lines); (err != nil) != c.bad {
				t.Errorf("CheckLength = %v, want bad=%v", err, c.bad)
			}
		})
	}
}

// TestNoLongSourceFile counts the lines of every Go file git tracks.
func TestNoLongSourceFile(t *testing.T) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--", "*.go").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	n := 0
	for _, path := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(root, path))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckLength(path, bytes.Count(b, []byte("\n"))); err != nil {
			t.Error(err)
		}
		n++
	}
	if n < 100 {
		t.Fatalf("read %d Go files; expected the whole repository", n)
	}
}

// TestArchitectureNamesEveryPackage: docs/architecture.md has a table row
// "| `path` | …" for every package go list finds (every build tag the
// project uses), and no row for a package that is gone. Functions are
// listed in its functions table instead.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	cmd := exec.Command("go", "list", "-tags", "integration,rie", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	row := regexp.MustCompile("^\\| `((?:shared|infra)/[^`]*)` \\|")
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		if m := row.FindStringSubmatch(sc.Text()); m != nil {
			rows[m[1]] = true
		}
	}
	const module = "github.com/useprickle/prickle/"
	listed := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(p, module)
		if strings.HasPrefix(rel, "functions/") {
			continue
		}
		listed[rel] = true
		if !rows[rel] {
			t.Errorf("docs/architecture.md has no row for %s", rel)
		}
	}
	for r := range rows {
		if !listed[r] {
			if _, err := os.Stat(filepath.Join(root, r)); err != nil || !strings.HasPrefix(r, "infra/") {
				t.Errorf("docs/architecture.md names %s, which go list does not find", r)
			}
		}
	}
}

// TestDocumentedCommandsExist: every `go install …/<path>@…`, `go build … ./<path>`
// and `go run ./<path>` in the README and docs names a command (package main)
// of this module, so an install line cannot outlive a move.
func TestDocumentedCommandsExist(t *testing.T) {
	cmdRef := regexp.MustCompile(`go (?:install github\.com/useprickle/prickle/|build [^\n` + "`" + `]*?\./|run \./)((?:infra|functions)/[A-Za-z0-9_./-]+?)(?:@|[\s` + "`" + `]|$)`)
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append(docs, filepath.Join(root, "README.md"))
	seen := map[string]bool{}
	for _, d := range docs {
		b, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range cmdRef.FindAllStringSubmatch(string(b), -1) {
			seen[strings.TrimSuffix(m[1], "/")] = true
		}
	}
	if len(seen) < 3 {
		t.Fatalf("found %d documented commands; the pattern no longer matches the docs", len(seen))
	}
	for p := range seen {
		cmd := exec.Command("go", "list", "-f", "{{.Name}}", "./"+p)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil || strings.TrimSpace(string(out)) != "main" {
			t.Errorf("the docs run ./%s, which is not a command of this module (%v %s)", p, err, out)
		}
	}
}

func TestRepeats(t *testing.T) {
	run := "a := 1\nb := 2\nc := a + b\nd := c * 2\ne := d - a\nf := e / b\n"
	for _, c := range []struct {
		name  string
		files map[string]string
		want  int
	}{
		{"none", map[string]string{"a.go": run, "b.go": "x := 1\n"}, 0},
		{"one run in two files", map[string]string{"a.go": run, "b.go": "package b\n" + run}, 1},
		{"a longer run is one repeat", map[string]string{"a.go": run + "g := f\n", "b.go": run + "g := f\n"}, 1},
		{"white space and comments aside", map[string]string{"a.go": run, "b.go": strings.ReplaceAll(run, " := ", " :=   ") + "// note\n"}, 1},
		{"imports do not count", map[string]string{"a.go": "import (\n\"a\"\n\"b\"\n\"c\"\n\"d\"\n\"e\"\n\"f\"\n)\n", "b.go": "import (\n\"a\"\n\"b\"\n\"c\"\n\"d\"\n\"e\"\n\"f\"\n)\n"}, 0},
		{"five lines are not a repeat", map[string]string{"a.go": "a := 1\nb := 2\nc := 3\nd := 4\ne := 5\n", "b.go": "a := 1\nb := 2\nc := 3\nd := 4\ne := 5\n"}, 0},
		{"twice in one file", map[string]string{"a.go": run + "z()\n" + run}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Repeats(c.files); len(got) != c.want {
				t.Errorf("Repeats = %v, want %d", got, c.want)
			}
		})
	}
}

// TestFewRepeatsInProductCode reads what ships (functions, shared, infra/cmd,
// infra/routing, infra/slack; no tests, no test kits, no development
// harness) for runs of RepeatLines alike lines.
func TestFewRepeatsInProductCode(t *testing.T) {
	out, err := exec.Command("git", "-C", root, "ls-files", "functions", "shared", "infra/cmd", "infra/routing", "infra/slack").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	kit := regexp.MustCompile(`(^|/)[a-z]*test/`)
	files := map[string]string{}
	for _, p := range strings.Fields(string(out)) {
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || kit.MatchString(p) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, p))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		files[p] = string(b)
	}
	reps := Repeats(files)
	for _, r := range reps {
		t.Logf("repeat: %s", r)
	}
	if len(reps) > MaxRepeats {
		t.Errorf("%d runs of %d or more alike lines in product code, at most %d: make one piece of code serve, or say in a comment why the two stand apart", len(reps), RepeatLines, MaxRepeats)
	}
}
