package runner

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// The path rules of file claims. A file is claimed and guarded by its path
// relative to the project's repository root (the git top-level of the
// run's directory, or that directory when it is no git checkout): cleaned,
// with symbolic links resolved and '/' between its parts. A file outside
// the root is never claimed nor guarded. A claim in a teammate's pulse
// covers exactly the file it names: it is never read as a pattern, so
// `*`, `*/*` or `src/*` hold no file but one named so, and a folder's name
// holds none of its files.

// gitTimeout bounds each git command the hook runs.
const gitTimeout = 5 * time.Second

// repoRoot is the repository root of dir: its git top-level, else dir
// itself; symbolic links resolved.
func repoRoot(ctx context.Context, dir string) string {
	root := dir
	if out, err := git(ctx, dir, "rev-parse", "--show-toplevel"); err == nil && out != "" {
		root = out
	}
	return realPath(root)
}

// gitBranch is the current branch of the checkout at root ("HEAD" when
// detached; a branch with no commit yet is named too), or "" when root is
// not a git checkout.
func gitBranch(ctx context.Context, root string) string {
	if out, err := git(ctx, root, "rev-parse", "--abbrev-ref", "HEAD"); err == nil {
		return out
	}
	out, _ := git(ctx, root, "symbolic-ref", "--short", "-q", "HEAD")
	return out
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// realPath is p (absolute, cleaned) with the symbolic links of its longest
// existing prefix resolved: a file about to be created has no links of its own.
func realPath(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for dir := p; ; dir = filepath.Dir(dir) {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrInvalid) {
			return p
		}
		if filepath.Dir(dir) == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// claimPath is the path file is claimed by: relative to root (a relative
// file is taken from cwd), slash-separated; ok is false for a file outside
// the root, or the root itself.
func claimPath(root, cwd, file string) (rel string, ok bool) {
	if file == "" {
		return "", false
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(cwd, file)
	}
	r, err := filepath.Rel(root, realPath(file))
	if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// cleanClaim is a claim as a pulse lists it, in the form claimPath gives:
// "./src//a.ts" is "src/a.ts"; an absolute claim, or one that leaves the
// root, names nothing in it and is "".
func cleanClaim(c string) string {
	c = strings.TrimSpace(strings.ReplaceAll(c, `\`, "/"))
	if c == "" || strings.HasPrefix(c, "/") {
		return ""
	}
	c = path.Clean(c)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return ""
	}
	return c
}

// covers reports whether a claim covers the file rel (a claimPath): the
// same path once cleaned. A claim is never a pattern: `*`, `?` and `[…]`
// are characters of a file's name, so `app/[id]/page.tsx` is covered by
// itself alone, and a pulse listing `*` holds nothing else.
func covers(claim, rel string) bool {
	c := cleanClaim(claim)
	return c != "" && c == rel
}
