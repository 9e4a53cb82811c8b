package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// stats collects every call's latency by tool and its answer's kind.
type stats struct {
	mu       sync.Mutex
	lat      map[string][]time.Duration
	kinds    map[string]int
	examples map[string]string // one answer per unexpected kind, for the report
	calls    int
	timeouts int // calls that ended at the client's timeout
}

func newStats() *stats {
	return &stats{lat: map[string][]time.Duration{}, kinds: map[string]int{}, examples: map[string]string{}}
}

func (s *stats) add(tool string, a answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.lat[tool] = append(s.lat[tool], a.latency)
	s.kinds[a.kind]++
	if isTimeout(a) {
		s.timeouts++
	}
	if !expected(a.kind) {
		if _, ok := s.examples[a.kind]; !ok {
			s.examples[a.kind] = tool + ": " + clip(a.text, 300)
		}
	}
}

// unexpected counts the answers a healthy run does not give.
func (s *stats) unexpected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, c := range s.kinds {
		if !expected(k) {
			n += c
		}
	}
	return n
}

// progress is the line printed every 10 s.
func (s *stats) progress(elapsed time.Duration) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []time.Duration
	for _, l := range s.lat {
		all = append(all, l...)
	}
	return fmt.Sprintf("%5.0fs  %6d calls  %6.1f/s  p50 %s  p99 %s  %s", elapsed.Seconds(), s.calls,
		float64(s.calls)/elapsed.Seconds(), ms(percentile(all, 50)), ms(percentile(all, 99)), kindsLine(s.kinds))
}

// report writes throughput, p50/p99 per tool and the answers by kind.
func (s *stats) report(w io.Writer, elapsed time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(w, "\n%d calls in %.0f s: %.1f calls/s\n\n", s.calls, elapsed.Seconds(), float64(s.calls)/elapsed.Seconds())
	fmt.Fprintf(w, "| tool | calls | p50 | p99 |\n|---|---:|---:|---:|\n")
	tools := make([]string, 0, len(s.lat))
	for t := range s.lat {
		tools = append(tools, t)
	}
	sort.Strings(tools)
	for _, t := range tools {
		fmt.Fprintf(w, "| %s | %d | %s | %s |\n", t, len(s.lat[t]), ms(percentile(s.lat[t], 50)), ms(percentile(s.lat[t], 99)))
	}
	fmt.Fprintf(w, "\nanswers by kind: %s\n", kindsLine(s.kinds))
	keys := make([]string, 0, len(s.examples))
	for k := range s.examples {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  e.g. %s: %s\n", k, s.examples[k])
	}
}

func kindsLine(kinds map[string]int) string {
	keys := make([]string, 0, len(kinds))
	for k := range kinds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, kinds[k])
	}
	return strings.Join(parts, " ")
}

// percentile is the nearest-rank percentile of the durations (0 for none).
func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s), i)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
