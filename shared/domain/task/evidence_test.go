package task_test

import (
	"testing"

	"github.com/useprickle/prickle/shared/domain/task"
)

// item is evidence of a kind that carries content (or nothing, for a note).
func item(kind string) task.Evidence {
	e := task.Evidence{Kind: kind, Summary: kind + " evidence"}
	if kind != "note" {
		e.URL = "https://example.com/" + kind
	}
	return e
}

func evidence(kinds ...string) []task.Evidence {
	out := make([]task.Evidence, len(kinds))
	for i, k := range kinds {
		out[i] = item(k)
	}
	return out
}

var allKinds = []string{"test_output", "screenshot", "link", "pull_request", "commit", "note"}

func TestEvidenceFitsDeliverableType(t *testing.T) {
	// accepts lists, per deliverable type, the kinds that satisfy it alone.
	accepts := map[string][]string{
		"code":        {"test_output", "commit", "pull_request"},
		"reviewed_pr": {"pull_request"},
		"screenshots": {"screenshot"},
		"design":      {"screenshot", "link"},
		"doc":         {"link", "commit", "pull_request"},
		"data":        {"link", "commit", "pull_request"},
		"answer":      allKinds,
		"other":       allKinds,
	}
	refusals := map[string]string{
		"code":        "a code result needs evidence of kind test_output, commit or pull_request; got ",
		"reviewed_pr": "a reviewed_pr result needs evidence of kind pull_request; got ",
		"screenshots": "a screenshots result needs evidence of kind screenshot; got ",
		"design":      "a design result needs evidence of kind screenshot or link; got ",
		"doc":         "a doc result needs evidence of kind link, commit or pull_request; got ",
		"data":        "a data result needs evidence of kind link, commit or pull_request; got ",
	}
	for typ, ok := range accepts {
		for _, kind := range allKinds {
			fits := false
			for _, k := range ok {
				fits = fits || k == kind
			}
			name := typ + "/" + kind
			t.Run(name, func(t *testing.T) {
				err := task.CheckResult(typ, task.Result{Summary: "s", Evidence: evidence(kind), Provenance: task.ProvenanceAgentGenerated})
				if fits {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					return
				}
				assertRefusal(t, err, refusals[typ]+kind)
			})
		}
	}
}

func TestEvidenceRules(t *testing.T) {
	cases := []struct {
		name     string
		typ      string
		evidence []task.Evidence
		prov     string
		refusal  string // empty: accepted
	}{
		{name: "notes alone refused for code", typ: "code", evidence: evidence("note", "note"),
			refusal: "a code result needs evidence of kind test_output, commit or pull_request; got note, note"},
		{name: "notes alone refused for reviewed_pr", typ: "reviewed_pr", evidence: evidence("note"),
			refusal: "a reviewed_pr result needs evidence of kind pull_request; got note"},
		{name: "notes alone refused for screenshots", typ: "screenshots", evidence: evidence("note"),
			refusal: "a screenshots result needs evidence of kind screenshot; got note"},
		{name: "notes alone accepted for answer", typ: "answer", evidence: evidence("note", "note")},
		{name: "notes alone accepted for other", typ: "other", evidence: evidence("note")},
		{name: "one fitting item among notes is enough", typ: "code", evidence: evidence("note", "commit")},
		{name: "refusal lists every kind given", typ: "reviewed_pr", evidence: evidence("commit", "link"),
			refusal: "a reviewed_pr result needs evidence of kind pull_request; got commit, link"},
		{name: "item with content and no url", typ: "code", evidence: []task.Evidence{{Kind: "test_output", Summary: "ok", Content: "PASS"}}},
		{name: "item with neither url nor content", typ: "code", evidence: []task.Evidence{{Kind: "test_output", Summary: "ok"}},
			refusal: "evidence[0] (kind test_output) needs a url or content; only kind note may have neither"},
		{name: "the empty item is named by its index", typ: "answer", evidence: []task.Evidence{item("note"), {Kind: "link", Summary: "ok"}},
			refusal: "evidence[1] (kind link) needs a url or content; only kind note may have neither"},
		{name: "a bare note is fine", typ: "answer", evidence: []task.Evidence{{Kind: "note", Summary: "6 words"}}},
		{name: "no evidence", typ: "answer", evidence: nil, refusal: "evidence is required: at least one item"},
		{name: "from_approved_context provenance", typ: "answer", evidence: evidence("note"), prov: task.ProvenanceFromApprovedContext},
		{name: "owner_instruction provenance", typ: "answer", evidence: evidence("note"), prov: task.ProvenanceOwnerInstruction},
		{name: "owner_approved provenance is the server's alone", typ: "answer", evidence: evidence("note"), prov: task.ProvenanceOwnerApproved,
			refusal: "provenance owner_approved is set only when a human owner approves the result; use agent_generated, from_approved_context or owner_instruction"},
		{name: "unknown provenance", typ: "answer", evidence: evidence("note"), prov: "trust_me",
			refusal: `provenance "trust_me" is not one of agent_generated, from_approved_context or owner_instruction`},
		{name: "provenance is checked before evidence", typ: "code", evidence: nil, prov: task.ProvenanceOwnerApproved,
			refusal: "provenance owner_approved is set only when a human owner approves the result; use agent_generated, from_approved_context or owner_instruction"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prov := c.prov
			if prov == "" {
				prov = task.ProvenanceAgentGenerated
			}
			err := task.CheckResult(c.typ, task.Result{Summary: "s", Evidence: c.evidence, Provenance: prov})
			if c.refusal == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			assertRefusal(t, err, c.refusal)
		})
	}
}
