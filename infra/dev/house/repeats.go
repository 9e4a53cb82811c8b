package house

import (
	"fmt"
	"sort"
	"strings"
)

// RepeatLines is how many alike lines make a repeat, and MaxRepeats how
// many repeated runs product code may hold, each left one saying why in a
// comment.
const (
	RepeatLines = 6
	MaxRepeats  = 8
)

// A Repeat is a run of at least RepeatLines code lines that stands again,
// the same to the letter but for white space, elsewhere: its first place
// and its other.
type Repeat struct{ A, B string }

func (r Repeat) String() string { return r.A + " ~ " + r.B }

// codeLine is one line that counts, with its line number.
type codeLine struct {
	n    int
	text string
}

// codeLines are the lines of a Go file that count towards a repeat: not
// blank, not a comment, not an import, not lone punctuation.
func codeLines(src string) []codeLine {
	var out []codeLine
	inImport := false
	for i, l := range strings.Split(src, "\n") {
		l = strings.Join(strings.Fields(l), " ")
		switch {
		case inImport:
			inImport = l != ")"
			continue
		case l == "import (":
			inImport = true
			continue
		case l == "", strings.HasPrefix(l, "//"), strings.HasPrefix(l, "import "), strings.Trim(l, "{}()[],;") == "":
			continue
		}
		out = append(out, codeLine{i + 1, l})
	}
	return out
}

// Repeats finds the runs of RepeatLines or more code lines that stand in
// two places of files (path → source), once per pair of runs.
func Repeats(files map[string]string) []Repeat {
	type place struct {
		path string
		at   int // index into that file's code lines
	}
	lines := map[string][]codeLine{}
	seen := map[string][]place{}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		cl := codeLines(files[p])
		lines[p] = cl
		for i := 0; i+RepeatLines <= len(cl); i++ {
			var key strings.Builder
			for _, l := range cl[i : i+RepeatLines] {
				key.WriteString(l.text + "\n")
			}
			seen[key.String()] = append(seen[key.String()], place{p, i})
		}
	}
	// A window repeated in places a and b continues the run that began one
	// line earlier in both; only a run's first window is reported.
	type pair struct{ a, b place }
	pairs := map[pair]bool{}
	for _, ps := range seen {
		for i := range ps {
			for j := i + 1; j < len(ps); j++ {
				if ps[i].path == ps[j].path && ps[j].at-ps[i].at < RepeatLines {
					continue // a run that overlaps itself (a list of alike lines)
				}
				pairs[pair{ps[i], ps[j]}] = true
			}
		}
	}
	var out []Repeat
	for p := range pairs {
		if pairs[pair{place{p.a.path, p.a.at - 1}, place{p.b.path, p.b.at - 1}}] {
			continue
		}
		a, b := lines[p.a.path][p.a.at], lines[p.b.path][p.b.at]
		out = append(out, Repeat{fmt.Sprintf("%s:%d", p.a.path, a.n), fmt.Sprintf("%s:%d", p.b.path, b.n)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
