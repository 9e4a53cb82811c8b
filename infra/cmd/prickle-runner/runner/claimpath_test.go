package runner

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	jobs "github.com/useprickle/prickle/shared/jobs/runnerapi"
)

// gitRepo makes a git checkout on branch in a temporary directory (its
// real path) with a src/lib folder, and returns its root.
func gitRepo(t *testing.T, branch string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", "-b", branch, root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(root, "src", "lib"), 0o700); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestClaimPath(t *testing.T) {
	root := gitRepo(t, "main")
	outside := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "src"), filepath.Join(outside, "src-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "out-link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, cwd, file, want string
		ok                    bool
	}{
		{"absolute, in the root", root, root + "/src/app.ts", "src/app.ts", true},
		{"cleaned", root, root + "/src/./lib//../app.ts", "src/app.ts", true},
		{"relative to the cwd", filepath.Join(root, "src"), "lib/x.ts", "src/lib/x.ts", true},
		{"a new file in a new folder", root, root + "/docs/new/page.md", "docs/new/page.md", true},
		{"a file whose name has brackets", root, root + "/app/[id]/page.tsx", "app/[id]/page.tsx", true},
		{"through a link into the root", root, filepath.Join(outside, "src-link", "app.ts"), "src/app.ts", true},
		{"outside the root", root, filepath.Join(outside, "x.ts"), "", false},
		{"up and out with ..", root, root + "/src/../../x.ts", "", false},
		{"relative, up and out", filepath.Join(root, "src"), "../../etc/passwd", "", false},
		{"the root itself", root, root, "", false},
		{"a link in the root that leads out", root, filepath.Join(root, "out-link", "x.ts"), "", false},
		{"a sibling whose name starts like the root", root, root + "-other/x.ts", "", false},
		{"no file", root, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := claimPath(root, tt.cwd, tt.file)
			if got != tt.want || ok != tt.ok {
				t.Errorf("claimPath(%q) = %q, %v; want %q, %v", tt.file, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestRepoRootAndBranch(t *testing.T) {
	ctx := context.Background()
	root := gitRepo(t, "feature/claims")
	if got := repoRoot(ctx, filepath.Join(root, "src", "lib")); got != root {
		t.Errorf("repoRoot of a folder in a checkout = %q, want its top-level %q", got, root)
	}
	if got := gitBranch(ctx, root); got != "feature/claims" {
		t.Errorf("branch = %q, want feature/claims", got)
	}
	plain, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(plain))
	if got := repoRoot(ctx, plain); got != plain {
		t.Errorf("repoRoot of a folder that is no checkout = %q, want the folder", got)
	}
	if got := gitBranch(ctx, plain); got != "" {
		t.Errorf("branch of no checkout = %q, want none", got)
	}
}

func TestCovers(t *testing.T) {
	tests := []struct {
		claim, file string
		want        bool
	}{
		{"src/app.ts", "src/app.ts", true},
		{"./src/app.ts", "src/app.ts", true},
		{"src//lib/../app.ts", "src/app.ts", true},
		{`src\app.ts`, "src/app.ts", true},
		{" src/app.ts ", "src/app.ts", true},
		{"src/app.ts", "src/app.tsx", false},
		{"src/*", "src/app.ts", false}, // a claim is never a pattern
		{"src/*/x.ts", "src/lib/x.ts", false},
		{"src/**", "src/lib/x.ts", false},
		{"*.ts", "src/app.ts", false},
		{"src/app.?s", "src/app.ts", false},
		{"*/*", "src/app.ts", false},
		{"app/[id]/page.tsx", "app/[id]/page.tsx", true}, // literally itself
		{"app/[a-z]/page.tsx", "app/i/page.tsx", false},
		{"src/[", "src/[", true},
		{"src/*", "src/*", true},
		{"src", "src/app.ts", false}, // a folder's name is no claim of its files
		{"src/", "src/app.ts", false},
		{"/abs/src/app.ts", "src/app.ts", false},
		{"../src/app.ts", "src/app.ts", false},
		{"..", "src/app.ts", false},
		{"", "src/app.ts", false},
		{"*", "src/app.ts", false},
	}
	for _, tt := range tests {
		if got := covers(tt.claim, tt.file); got != tt.want {
			t.Errorf("covers(%q, %q) = %v, want %v", tt.claim, tt.file, got, tt.want)
		}
	}
}

// The bounds the claims keep are update_pulse's (its published schema), and
// the settings path is Prickle's.
func TestClaimBoundsArePrickles(t *testing.T) {
	b, err := os.ReadFile("../../../../shared/mcp/catalog/schemas/update_pulse.input.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Files struct {
				MaxItems int `json:"maxItems"`
				Items    struct {
					MaxLength int `json:"maxLength"`
				} `json:"items"`
			} `json:"files"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	if f := schema.Properties.Files; f.MaxItems != MaxPulseFiles || f.Items.MaxLength != MaxPulseFile {
		t.Errorf("update_pulse's files: at most %d of %d characters; the runner keeps %d of %d", f.MaxItems, f.Items.MaxLength, MaxPulseFiles, MaxPulseFile)
	}
	if ProjectPath != jobs.ProjectPath || !strings.HasPrefix(ProjectPath, "/runner/") {
		t.Errorf("ProjectPath %q, Prickle's %q", ProjectPath, jobs.ProjectPath)
	}
}
