package web_test

import (
	"testing"

	"github.com/useprickle/prickle/shared/owners/web"
	"github.com/useprickle/prickle/shared/team/teamtest"
)

func TestApprovalFlowsInMemory(t *testing.T) {
	runFlows(t, func(t *testing.T) roomBackend {
		st := teamtest.New()
		st.AddProject(project)
		st.AddAgent(writer)
		st.AddAgent(review)
		return st
	})
}

// TestNewRequiresAStore: a wiring without the pages' store fails where it
// is built, instead of serving pages that cannot read anything.
func TestNewRequiresAStore(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("web.New without a Store did not panic")
		}
	}()
	web.New(web.Config{Signer: signer})
}
