// Command update_pulse is the Lambda function of the update_pulse tool (team.Service.UpdatePulse), reached by `Mcp-Name: update_pulse`.
package main

import "github.com/useprickle/prickle/shared/mcp/lambdamcp"

func main() { lambdamcp.StartMCP("update_pulse") }
