package web_test

import (
	"testing"

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
