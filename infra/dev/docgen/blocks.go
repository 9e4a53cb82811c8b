package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// File is a document with one generated block.
type File struct {
	Path  string // from the repository root
	Block string // the block's name in its markers
	Body  func() string
}

// Files are the generated blocks, by file.
var Files = []File{
	{Path: "README.md", Block: "tool table", Body: Table},
	{Path: filepath.Join("docs", "tools.md"), Block: "tool reference", Body: Reference},
}

func begin(block string) string {
	return "<!-- begin generated " + block + ": go run ./infra/dev/docgen (make docs); do not edit -->"
}

func end(block string) string { return "<!-- end generated " + block + " -->" }

// Replace returns doc with the block between its markers made body.
func Replace(doc, block, body string) (string, error) {
	b, e := begin(block), end(block)
	i := strings.Index(doc, b)
	j := strings.Index(doc, e)
	if i < 0 || j < i || strings.Count(doc, b) != 1 || strings.Count(doc, e) != 1 {
		return "", fmt.Errorf("the markers of the %s (%q … %q) are not there once, in order", block, b, e)
	}
	return doc[:i+len(b)] + "\n" + body + doc[j:], nil
}

// Current returns the file as it should be, and the file as it is.
func (f File) Current(root string) (want, got string, err error) {
	b, err := os.ReadFile(filepath.Join(root, f.Path))
	if err != nil {
		return "", "", fmt.Errorf("read %s: %w", f.Path, err)
	}
	want, err = Replace(string(b), f.Block, f.Body())
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", f.Path, err)
	}
	return want, string(b), nil
}

// Write regenerates the file's block in place.
func (f File) Write(root string) error {
	want, got, err := f.Current(root)
	if err != nil || want == got {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, f.Path), []byte(want), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", f.Path, err)
	}
	return nil
}
