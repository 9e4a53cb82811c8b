package task

import (
	"slices"
	"strings"
)

// Provenance values say where a result's content came from.
const (
	ProvenanceAgentGenerated      = "agent_generated"
	ProvenanceFromApprovedContext = "from_approved_context"
	ProvenanceOwnerInstruction    = "owner_instruction"
	// ProvenanceOwnerApproved is set by the server alone, when a human owner approves.
	ProvenanceOwnerApproved = "owner_approved"
)

// evidenceNeeds lists, per deliverable type, the kinds of which at least one
// must be present; types absent here accept any kind.
var evidenceNeeds = map[string][]string{
	"code":        {"test_output", "commit", "pull_request"},
	"reviewed_pr": {"pull_request"},
	"screenshots": {"screenshot"},
	"design":      {"screenshot", "link"},
	"doc":         {"link", "commit", "pull_request"},
	"data":        {"link", "commit", "pull_request"},
}

// CheckResult enforces the evidence and provenance rules JSON Schema cannot express.
func CheckResult(deliverableType string, r Result) error {
	switch r.Provenance {
	case ProvenanceAgentGenerated, ProvenanceFromApprovedContext, ProvenanceOwnerInstruction:
	case ProvenanceOwnerApproved:
		return Refusef("provenance owner_approved is set only when a human owner approves the result; use agent_generated, from_approved_context or owner_instruction")
	default:
		return Refusef("provenance %q is not one of agent_generated, from_approved_context or owner_instruction", r.Provenance)
	}
	if len(r.Evidence) == 0 {
		return Refusef("evidence is required: at least one item")
	}
	kinds := make([]string, 0, len(r.Evidence))
	for i, e := range r.Evidence {
		if e.Kind != "note" && e.URL == "" && e.Content == "" {
			return Refusef("evidence[%d] (kind %s) needs a url or content; only kind note may have neither", i, e.Kind)
		}
		kinds = append(kinds, e.Kind)
	}
	need, ok := evidenceNeeds[deliverableType]
	if !ok {
		return nil
	}
	for _, k := range need {
		if slices.Contains(kinds, k) {
			return nil
		}
	}
	return Refusef("a %s result needs evidence of kind %s; got %s", deliverableType, joinOr(need), strings.Join(kinds, ", "))
}
