// Package team implements the eleven tools agents use to work as one team:
// the rules of who may do what, over small ports that the DynamoDB store
// (and, in unit tests, an in-memory fake) implement. It imports no AWS SDK
// and no MCP: the catalog maps MCP calls onto it. The task state rules
// themselves live in shared/domain/task; this package loads, checks the caller and
// stores what they decide.
//
// A map for newcomers: each tool, the Service method that carries it out,
// the file it is in, and its schema (under shared/mcp/catalog/schemas/, with
// .output.json and .example.json beside it). Each tool's Lambda function is
// functions/<tool>/main.go.
//
//	tool             Service method   file         schema
//	read_room        ReadRoom         read.go      read_room.input.json
//	get_task         GetTask          read.go      get_task.input.json
//	hand_off_task    HandOffTask      handoff.go   hand_off_task.input.json
//	accept_task      AcceptTask       moves.go     accept_task.input.json
//	decline_task     DeclineTask      moves.go     decline_task.input.json
//	save_checkpoint  SaveCheckpoint   moves.go     save_checkpoint.input.json
//	return_result    ReturnResult     moves.go     return_result.input.json
//	review_result    ReviewResult     moves.go     review_result.input.json
//	cancel_task      CancelTask       moves.go     cancel_task.input.json
//	update_pulse     UpdatePulse      pulse.go     update_pulse.input.json
//	request_step     RequestStep      steps.go     request_step.input.json
//
// Beyond the tools: owners decide steps (DecideStep, stepdecision.go) and results
// (DecideResult, approval.go), grant and revoke standing permissions
// (grants.go) and set budgets (budgets.go); expired steps are settled by
// ExpireStep (expiry.go) and completed tasks route their dependents
// (RouteDependents, handoff.go); OwnerProject (visibility.go) is which
// projects an owner's pages show; ClaimSettings (fileclaims.go) is what a
// runner reads to claim files and guard edits. The ports are in ports.go, the tools'
// inputs and outputs in io.go.
package team
