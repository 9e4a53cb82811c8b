// Package house keeps the rules of the repository itself, each as a test:
// no build output in git (no executable, nothing over 1 MB but the Team
// Pulse picture), no source file over MaxFileLines, at most MaxRepeats runs
// of RepeatLines alike lines in product code, and docs/architecture.md
// naming every package in one line.
package house

import (
	"bytes"
	"fmt"
	"strings"
)

// MaxTrackedBytes is the largest file git may track, the pictures in
// BigFilesAllowed aside: anything larger is build output or data that
// belongs elsewhere.
const MaxTrackedBytes = 1 << 20

// BigFilesAllowed are the tracked files that may pass MaxTrackedBytes.
var BigFilesAllowed = map[string]bool{"docs/team-pulse.png": true}

// TrackedFile is one file as git tracks it: its path, its mode (100755 is
// executable), its size and its first bytes.
type TrackedFile struct {
	Path string
	Mode string
	Size int64
	Head []byte
}

// binaryMagic are the first bytes of the executables Go and C toolchains
// write: ELF (Linux), Mach-O (macOS, both byte orders and fat), PE (Windows).
var binaryMagic = [][]byte{
	{0x7f, 'E', 'L', 'F'},
	{0xcf, 0xfa, 0xed, 0xfe}, {0xfe, 0xed, 0xfa, 0xcf},
	{0xce, 0xfa, 0xed, 0xfe}, {0xfe, 0xed, 0xfa, 0xce},
	{0xca, 0xfe, 0xba, 0xbe},
	{'M', 'Z'},
}

// Check says what is wrong with a tracked file, or nil: a compiled
// executable, an executable mode on what is not a script (#!), or a size
// over MaxTrackedBytes.
func Check(f TrackedFile) error {
	for _, m := range binaryMagic {
		if bytes.HasPrefix(f.Head, m) {
			return fmt.Errorf("%s is a compiled executable: build output stays out of git (add it to .gitignore)", f.Path)
		}
	}
	if f.Mode == "100755" && !bytes.HasPrefix(f.Head, []byte("#!")) {
		return fmt.Errorf("%s is executable but not a script (#!): build output stays out of git", f.Path)
	}
	if f.Size > MaxTrackedBytes && !BigFilesAllowed[f.Path] {
		return fmt.Errorf("%s is %d bytes, over %d: build output and data stay out of git", f.Path, f.Size, MaxTrackedBytes)
	}
	return nil
}

// MaxFileLines is the most lines a non-test Go file under functions/,
// shared/ or infra/ may hold: a longer one holds more than one concept and
// is split by concept, each file named for what it holds.
const MaxFileLines = 400

// CheckLength says what is wrong with the length of a tracked Go file, or
// nil: a non-test file under functions/, shared/ or infra/ over
// MaxFileLines.
func CheckLength(path string, lines int) error {
	if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
		return nil
	}
	top, _, _ := strings.Cut(path, "/")
	if top != "functions" && top != "shared" && top != "infra" {
		return nil
	}
	if lines > MaxFileLines {
		return fmt.Errorf("%s has %d lines, over %d: split it by concept, one file per concept", path, lines, MaxFileLines)
	}
	return nil
}
