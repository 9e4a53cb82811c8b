//go:build integration

package wake_test

import "github.com/useprickle/prickle/shared/team"

func teamProject() team.Project { return team.Project{Slug: "website-v2", Name: "Website v2"} }
