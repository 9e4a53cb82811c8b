package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/useprickle/prickle/shared/mcp/catalog"
)

// build compiles every functions/<name> for this machine (the emulator runs
// it natively; the deployed build is linux/arm64, same flags).
func (s *Stack) build(ctx context.Context) error {
	dirs, err := os.ReadDir(filepath.Join(s.opts.Root, "functions"))
	if err != nil {
		return err
	}
	type result struct {
		f   *Function
		err error
		out []byte
	}
	results := make(chan result)
	n := 0
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(s.opts.Root, "functions", d.Name(), "main.go")); err != nil {
			continue
		}
		n++
		f := &Function{Name: d.Name(), LogicalID: logicalID(d.Name()), Binary: filepath.Join(s.opts.StateDir, "bin", d.Name(), "bootstrap")}
		go func() {
			cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-tags", "lambda.norpc", "-ldflags", "-s -w", "-o", f.Binary, "./functions/"+f.Name)
			cmd.Dir = s.opts.Root
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH)
			out, err := cmd.CombinedOutput()
			results <- result{f, err, out}
		}()
	}
	var errs []error
	for range n {
		r := <-results
		if r.err != nil {
			if isMCP(r.f.Name) {
				errs = append(errs, fmt.Errorf("build %s: %v\n%s", r.f.Name, r.err, r.out))
			} else {
				s.opts.Log.Warn("function does not build; left out", "function", r.f.Name, "error", string(r.out))
			}
			continue
		}
		if fi, err := os.Stat(r.f.Binary); err == nil {
			r.f.Size = fi.Size()
		}
		s.Functions[r.f.Name] = r.f
		s.byLogical[r.f.LogicalID] = r.f
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, t := range append([]string{"mcp"}, toolNames()...) {
		if s.Functions[t] == nil {
			return fmt.Errorf("no functions/%s/main.go", t)
		}
	}
	return nil
}

func toolNames() []string {
	var out []string
	for _, t := range catalog.All() {
		out = append(out, t.Name)
	}
	return out
}
