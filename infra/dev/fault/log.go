package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// failures counts, in the stack's JSON log, the answers that were failures
// of the stack itself: requests answered 5xx, and lines at level ERROR (a
// store write that failed, a tool that could not answer). A landed write
// whose lost answer the stack took for a failure shows as one of these
// (the suites fail on a wrong answer of another kind). A run with nothing
// lost has none.
func failures(path string) (int, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, nil, fmt.Errorf("stack log: %w", err)
	}
	defer f.Close()
	n, examples := 0, []string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		var l struct {
			Level  string `json:"level"`
			Status int    `json:"status"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue // the stack's own lines (ready, links) are not JSON
		}
		if l.Level == "ERROR" || l.Status >= 500 {
			n++
			if len(examples) < 10 {
				examples = append(examples, clip(sc.Text(), 400))
			}
		}
	}
	if err := sc.Err(); err != nil {
		return n, examples, fmt.Errorf("stack log: %w", err)
	}
	return n, examples, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
