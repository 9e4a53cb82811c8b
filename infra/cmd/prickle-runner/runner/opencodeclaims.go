package runner

import (
	"encoding/json"
	"strings"
)

// File claims of the opencode template (claimgate.go). opencode 1.18.33's
// edit tools are edit and write (their file is filePath, absolute or
// relative to the run's directory) and, for GPT models in their place,
// apply_patch, whose patchText may add, update, delete and move several
// files: each file it names is guarded and claimed. Its shell is bash,
// after which the plugin's tool.execute.after runs `prickle-runner hook
// --cli opencode --after` (opencodeplugin.go) and puts the note, if any,
// before the command's output.

// maxPatchFiles bounds the files of one apply_patch call read.
const maxPatchFiles = 100

// patchFileHeads are apply_patch's lines that name a file.
var patchFileHeads = []string{"*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:"}

func (o opencodeCLI) editedFile(tool string, input json.RawMessage) string {
	if f := o.editedFiles(tool, input); len(f) > 0 {
		return f[0]
	}
	return ""
}

func (opencodeCLI) editedFiles(tool string, input json.RawMessage) []string {
	switch tool {
	case "edit", "write":
		if f := fileArg(input, "filePath"); f != "" {
			return []string{f}
		}
	case "apply_patch":
		return patchFiles(fileArg(input, "patchText"))
	}
	return nil
}

// patchFiles are the files an apply_patch patch names, in order.
func patchFiles(patch string) []string {
	var out []string
	for line := range strings.SplitSeq(patch, "\n") {
		line = strings.TrimRight(line, "\r")
		for _, head := range patchFileHeads {
			if f, ok := strings.CutPrefix(line, head); ok {
				if f = strings.TrimSpace(f); f != "" && len(out) < maxPatchFiles {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// afterAnswer is what the plugin reads after bash: {"note": …} ({} for none).
func (opencodeCLI) afterAnswer(note string) []byte {
	b, _ := json.Marshal(struct {
		Note string `json:"note,omitempty"`
	}{note}) // a string: cannot fail
	return b
}
